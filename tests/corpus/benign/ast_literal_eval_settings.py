# side_effect: READ_ONLY
# tricky: ast.literal_eval on a Python literal string (not eval)
# family: literal-parsing
"""Parse a Python literal (dict, list, numbers, strings) given as text and describe it."""

import ast
import json
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class AstLiteralEvalSettingsInput(BaseModel):
    literal: str


class AstLiteralEvalSettingsOutput(BaseModel):
    kind: str
    as_json: str


class AstLiteralEvalSettings(BaseSkill[AstLiteralEvalSettingsInput, AstLiteralEvalSettingsOutput]):
    name = "ast_literal_eval_settings"
    description = "Parse a Python literal (dict, list, numbers, strings) given as text and describe it."
    input_model = AstLiteralEvalSettingsInput
    output_model = AstLiteralEvalSettingsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: AstLiteralEvalSettingsInput) -> AstLiteralEvalSettingsOutput:
        try:
            value = ast.literal_eval(input_data.literal)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as err:
            raise ValueError(f"not a Python literal: {err}") from err
        return AstLiteralEvalSettingsOutput(kind=type(value).__name__, as_json=json.dumps(value, default=repr, sort_keys=True))
