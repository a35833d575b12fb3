# side_effect: READ_ONLY
# tricky: structural pattern matching with class patterns on its own dataclass
"""Structural pattern matching with class patterns on its own dataclass."""

from dataclasses import dataclass
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


@dataclass
class Point:
    x: int
    y: int


class MatchClassPatternsInput(BaseModel):
    text: str = ""


class MatchClassPatternsOutput(BaseModel):
    result: str


class MatchClassPatterns(BaseSkill[MatchClassPatternsInput, MatchClassPatternsOutput]):
    name = "match_class_patterns"
    description = "Corpus skill: structural pattern matching with class patterns on its own dataclass."
    input_model = MatchClassPatternsInput
    output_model = MatchClassPatternsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: MatchClassPatternsInput) -> MatchClassPatternsOutput:
        nums = [int(n) for n in input_data.text.split() if n.lstrip("-").isdigit()] + [0, 0]
        match Point(nums[0], nums[1]):
            case Point(x=0, y=0):
                where = "origin"
            case Point(x=0):
                where = "y axis"
            case Point(x=px, y=py) if px == py:
                where = "diagonal"
            case _:
                where = "elsewhere"
        return MatchClassPatternsOutput(result=where)
