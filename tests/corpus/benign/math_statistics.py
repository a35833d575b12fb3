# side_effect: READ_ONLY
# tricky: math and statistics over parsed numbers
"""Math and statistics over parsed numbers."""

import math
import statistics
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class MathStatisticsInput(BaseModel):
    text: str = ""


class MathStatisticsOutput(BaseModel):
    result: str


class MathStatistics(BaseSkill[MathStatisticsInput, MathStatisticsOutput]):
    name = "math_statistics"
    description = "Corpus skill: math and statistics over parsed numbers."
    input_model = MathStatisticsInput
    output_model = MathStatisticsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: MathStatisticsInput) -> MathStatisticsOutput:
        nums = [float(x) for x in input_data.text.split() if x.strip()]
        if not nums:
            return MathStatisticsOutput(result="empty")
        spread = statistics.pstdev(nums) if len(nums) > 1 else 0.0
        return MathStatisticsOutput(result=f"{statistics.fmean(nums):.3f} {spread:.3f} {math.fsum(nums):.1f} {math.isqrt(len(nums))}")
