# side_effect: READ_ONLY
# tricky: sys.float_info.epsilon / max and sys.byteorder read as constants
# family: sys-constants
"""Compare floats with a relative tolerance based on machine epsilon."""

import math
import sys
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class SysFloatInfoCompareInput(BaseModel):
    pairs: list[tuple[float, float]]
    ulps: int = 4


class SysFloatInfoCompareOutput(BaseModel):
    equal: list[bool]
    epsilon: float
    byteorder: str


class SysFloatInfoCompare(BaseSkill[SysFloatInfoCompareInput, SysFloatInfoCompareOutput]):
    name = "sys_float_info_compare"
    description = "Compare floats with a relative tolerance based on machine epsilon."
    input_model = SysFloatInfoCompareInput
    output_model = SysFloatInfoCompareOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SysFloatInfoCompareInput) -> SysFloatInfoCompareOutput:
        eps = sys.float_info.epsilon * max(1, input_data.ulps)
        equal = [math.isclose(a, b, rel_tol=eps, abs_tol=sys.float_info.min) for a, b in input_data.pairs]
        return SysFloatInfoCompareOutput(equal=equal, epsilon=sys.float_info.epsilon, byteorder=sys.byteorder)
