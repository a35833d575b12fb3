# side_effect: READ_ONLY
# tries: walk attributes with string.Formatter.get_field
# expect: POL-ESCAPE POL-INTROSPECTION
"""Walk attributes with string.Formatter.get_field."""

import string
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionStringFormatterInput(BaseModel):
    text: str = ""


class EvasionStringFormatterOutput(BaseModel):
    result: str


class EvasionStringFormatter(BaseSkill[EvasionStringFormatterInput, EvasionStringFormatterOutput]):
    name = "evasion_string_formatter"
    description = "Corpus skill: walk attributes with string.Formatter.get_field."
    input_model = EvasionStringFormatterInput
    output_model = EvasionStringFormatterOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionStringFormatterInput) -> EvasionStringFormatterOutput:
        value, _key = string.Formatter().get_field("0._context", (self,), {})
        return EvasionStringFormatterOutput(result=repr(value))
