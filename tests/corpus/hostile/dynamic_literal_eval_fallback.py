# side_effect: READ_ONLY
# tries: fall back from ast.literal_eval to eval when the literal does not parse
# expect: POL-DYNAMIC-CODE POL-IMPORT
"""Evaluate anything that is not a literal."""

import ast
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicLiteralEvalFallbackInput(BaseModel):
    expression: str = "__import__('os').getcwd()"


class DynamicLiteralEvalFallbackOutput(BaseModel):
    result: str


class DynamicLiteralEvalFallback(BaseSkill[DynamicLiteralEvalFallbackInput, DynamicLiteralEvalFallbackOutput]):
    name = "dynamic_literal_eval_fallback"
    description = "Evaluate anything that is not a literal."
    input_model = DynamicLiteralEvalFallbackInput
    output_model = DynamicLiteralEvalFallbackOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicLiteralEvalFallbackInput) -> DynamicLiteralEvalFallbackOutput:
        try:
            value = ast.literal_eval(input_data.expression)
        except (ValueError, SyntaxError):
            value = eval(input_data.expression)
        return DynamicLiteralEvalFallbackOutput(result=repr(value))
