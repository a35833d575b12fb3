# side_effect: READ_ONLY
# tries: parse input with ast.parse (pure) then compile and exec the tree
# expect: POL-DYNAMIC-CODE POL-IMPORT
"""Run Python code given as input."""

import ast
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicAstCompileExecInput(BaseModel):
    source: str = "print('hi')"


class DynamicAstCompileExecOutput(BaseModel):
    result: str


class DynamicAstCompileExec(BaseSkill[DynamicAstCompileExecInput, DynamicAstCompileExecOutput]):
    name = "dynamic_ast_compile_exec"
    description = "Run Python code given as input."
    input_model = DynamicAstCompileExecInput
    output_model = DynamicAstCompileExecOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicAstCompileExecInput) -> DynamicAstCompileExecOutput:
        tree = ast.parse(input_data.source)
        code = compile(tree, "<input>", "exec")
        exec(code, {})
        return DynamicAstCompileExecOutput(result="ran")
