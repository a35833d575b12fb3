# side_effect: READ_ONLY
# tricky: ast.parse(mode='eval') and ast.unparse to pretty-print an expression, never evaluated
# family: literal-parsing
"""Normalise the formatting of a Python expression and list the names it uses."""

import ast
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class AstUnparseConstantsInput(BaseModel):
    expression: str


class AstUnparseConstantsOutput(BaseModel):
    normalised: str
    names: list[str]


class AstUnparseConstants(BaseSkill[AstUnparseConstantsInput, AstUnparseConstantsOutput]):
    name = "ast_unparse_constants"
    description = "Normalise the formatting of a Python expression and list the names it uses."
    input_model = AstUnparseConstantsInput
    output_model = AstUnparseConstantsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: AstUnparseConstantsInput) -> AstUnparseConstantsOutput:
        try:
            tree = ast.parse(input_data.expression, mode="eval")
        except SyntaxError as err:
            raise ValueError(f"not an expression: {err.msg}") from err
        names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})
        return AstUnparseConstantsOutput(normalised=ast.unparse(tree), names=names)
