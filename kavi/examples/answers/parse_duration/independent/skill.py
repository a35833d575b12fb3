"""Seconds in a duration such as 1h30m, 2d 4h or 45s (written independently from the spec)."""

import re

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

STEP = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([dhms])\s*")
SECONDS_PER = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
ORDER = "dhms"


class ParseDurationInput(BaseModel):
    text: str


class ParseDurationOutput(BaseModel):
    seconds: float


class ParseDuration(BaseSkill[ParseDurationInput, ParseDurationOutput]):
    name = "parse_duration"
    description = "Parse a duration into seconds."
    input_model = ParseDurationInput
    output_model = ParseDurationOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ParseDurationInput) -> ParseDurationOutput:
        text = input_data.text.lower()
        position, total, last = 0, 0.0, -1
        while position < len(text):
            step = STEP.match(text, position)
            if step is None:
                raise ValueError(f"not a duration: {input_data.text!r}")
            rank = ORDER.index(step.group(2))
            if rank <= last:  # units from largest to smallest, each once
                raise ValueError(f"units out of order in {input_data.text!r}")
            last = rank
            total += float(step.group(1)) * SECONDS_PER[step.group(2)]
            position = step.end()
        if last < 0:
            raise ValueError("an empty duration")
        return ParseDurationOutput(seconds=total)
