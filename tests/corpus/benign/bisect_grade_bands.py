# side_effect: READ_ONLY
# tricky: bisect.bisect_right over module-level tuples of breakpoints
# family: algorithms
"""Turn exam scores into letter grades by breakpoints."""

import bisect
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


BREAKPOINTS = (60, 70, 80, 90)
GRADES = "FDCBA"


class BisectGradeBandsInput(BaseModel):
    scores: list[int]


class BisectGradeBandsOutput(BaseModel):
    grades: list[str]
    histogram: dict[str, int]


class BisectGradeBands(BaseSkill[BisectGradeBandsInput, BisectGradeBandsOutput]):
    name = "bisect_grade_bands"
    description = "Turn exam scores into letter grades by breakpoints."
    input_model = BisectGradeBandsInput
    output_model = BisectGradeBandsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: BisectGradeBandsInput) -> BisectGradeBandsOutput:
        grades = [GRADES[bisect.bisect_right(BREAKPOINTS, s)] for s in input_data.scores]
        return BisectGradeBandsOutput(grades=grades, histogram={g: grades.count(g) for g in GRADES if g in grades})
