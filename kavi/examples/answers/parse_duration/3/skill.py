"""Parse a duration such as "1h30m" or "45s" into seconds.

The text is read once from left to right, one number-unit part at a time, each matched where the previous one
ended: no pattern is tried again from every position, so the time grows linearly with the text.
"""

import re

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([dhms])")
UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


class ParseDurationInput(BaseModel):
    text: str


class ParseDurationOutput(BaseModel):
    seconds: float


class ParseDuration(BaseSkill[ParseDurationInput, ParseDurationOutput]):
    name = "parse_duration"
    description = "Parse a duration like 1h30m, 2d 4h or 45s into seconds."
    input_model = ParseDurationInput
    output_model = ParseDurationOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ParseDurationInput) -> ParseDurationOutput:
        text = input_data.text.strip().lower()
        total, parts, position = 0.0, 0, 0
        while position < len(text):
            part = PART.match(text, position)
            if part is None:
                raise ValueError(f"not a duration: {input_data.text[:80]!r}")
            total += float(part.group(1)) * UNIT_SECONDS[part.group(2)]
            parts += 1
            position = part.end()
        if not parts:
            raise ValueError("an empty duration")
        return ParseDurationOutput(seconds=total)
