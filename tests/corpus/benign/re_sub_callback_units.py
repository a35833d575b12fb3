# side_effect: READ_ONLY
# tricky: re.sub with a replacement function and re.escape of user text
# family: text-formats
"""Convert lengths in inches in a text to centimetres and highlight a keyword."""

import re
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


INCHES = re.compile(r"(\d+(?:\.\d+)?)\s?(?:in|inch|inches)\b")


class ReSubCallbackUnitsInput(BaseModel):
    text: str
    keyword: str = ""


class ReSubCallbackUnitsOutput(BaseModel):
    converted: str
    conversions: int


class ReSubCallbackUnits(BaseSkill[ReSubCallbackUnitsInput, ReSubCallbackUnitsOutput]):
    name = "re_sub_callback_units"
    description = "Convert lengths in inches in a text to centimetres and highlight a keyword."
    input_model = ReSubCallbackUnitsInput
    output_model = ReSubCallbackUnitsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ReSubCallbackUnitsInput) -> ReSubCallbackUnitsOutput:
        def to_cm(match: re.Match[str]) -> str:
            return f"{float(match.group(1)) * 2.54:.1f} cm"

        converted, n = INCHES.subn(to_cm, input_data.text)
        if input_data.keyword:
            converted = re.sub(re.escape(input_data.keyword), lambda m: m.group(0).upper(), converted, flags=re.I)
        return ReSubCallbackUnitsOutput(converted=converted, conversions=n)
