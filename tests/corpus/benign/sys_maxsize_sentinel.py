# side_effect: READ_ONLY
# tricky: sys.maxsize as a sentinel for the smallest difference
# family: sys-constants
"""Find the pair of numbers with the smallest difference."""

import sys
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class SysMaxsizeSentinelInput(BaseModel):
    numbers: list[int]


class SysMaxsizeSentinelOutput(BaseModel):
    pair: list[int]
    difference: int | None


class SysMaxsizeSentinel(BaseSkill[SysMaxsizeSentinelInput, SysMaxsizeSentinelOutput]):
    name = "sys_maxsize_sentinel"
    description = "Find the pair of numbers with the smallest difference."
    input_model = SysMaxsizeSentinelInput
    output_model = SysMaxsizeSentinelOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SysMaxsizeSentinelInput) -> SysMaxsizeSentinelOutput:
        values = sorted(input_data.numbers)
        best = sys.maxsize
        pair: list[int] = []
        for a, b in zip(values, values[1:]):
            if b - a < best:
                best, pair = b - a, [a, b]
        return SysMaxsizeSentinelOutput(pair=pair, difference=best if pair else None)
