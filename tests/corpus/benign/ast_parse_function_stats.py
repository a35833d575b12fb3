# side_effect: READ_ONLY
# tricky: ast.parse + ast.walk to count functions and branches (the tree is never compiled)
# family: literal-parsing
"""Report the functions in a Python snippet with their argument and branch counts."""

import ast
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class AstParseFunctionStatsInput(BaseModel):
    source: str


class AstParseFunctionStatsOutput(BaseModel):
    functions: list[dict[str, int | str]]
    node_count: int


class AstParseFunctionStats(BaseSkill[AstParseFunctionStatsInput, AstParseFunctionStatsOutput]):
    name = "ast_parse_function_stats"
    description = "Report the functions in a Python snippet with their argument and branch counts."
    input_model = AstParseFunctionStatsInput
    output_model = AstParseFunctionStatsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: AstParseFunctionStatsInput) -> AstParseFunctionStatsOutput:
        try:
            tree = ast.parse(input_data.source)
        except SyntaxError as err:
            raise ValueError(f"syntax error at line {err.lineno}: {err.msg}") from err
        functions: list[dict[str, int | str]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                branches = sum(isinstance(n, ast.If | ast.For | ast.While | ast.Try | ast.With) for n in ast.walk(node))
                functions.append({"name": node.name, "args": len(node.args.args), "branches": branches,
                                  "line": node.lineno})
        return AstParseFunctionStatsOutput(functions=functions, node_count=sum(1 for _ in ast.walk(tree)))
