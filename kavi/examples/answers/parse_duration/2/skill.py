"""Parse a duration such as "1h30m" or "45s" into seconds."""

import re

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

PART = re.compile(r"(\d+(?:\.\d+)?)\s*([dhms])")
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
        parts = PART.findall(text)
        leftover = PART.sub("", text).strip()
        if not parts or leftover:
            raise ValueError(f"not a duration: {input_data.text!r}")
        return ParseDurationOutput(seconds=sum(float(n) * UNIT_SECONDS[u] for n, u in parts))
