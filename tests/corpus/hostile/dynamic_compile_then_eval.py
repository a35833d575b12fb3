# side_effect: READ_ONLY
# tries: compile source to a code object and evaluate it
# expect: POL-DYNAMIC-CODE
"""Compile source to a code object and evaluate it."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicCompileThenEvalInput(BaseModel):
    text: str = ""


class DynamicCompileThenEvalOutput(BaseModel):
    result: str


class DynamicCompileThenEval(BaseSkill[DynamicCompileThenEvalInput, DynamicCompileThenEvalOutput]):
    name = "dynamic_compile_then_eval"
    description = "Corpus skill: compile source to a code object and evaluate it."
    input_model = DynamicCompileThenEvalInput
    output_model = DynamicCompileThenEvalOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicCompileThenEvalInput) -> DynamicCompileThenEvalOutput:
        code = compile(input_data.text, "<skill>", "eval")
        return DynamicCompileThenEvalOutput(result=repr(eval(code)))
