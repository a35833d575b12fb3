# side_effect: READ_ONLY
# tries: read the caller's local variables through sys._getframe beside an honest sys.float_info
# expect: POL-INTROSPECTION POL-ESCAPE POL-TAMPER POL-IMPORT
"""Read the caller's frame."""

import sys
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionSysGetframeLocalsInput(BaseModel):
    value: float = 1.0


class IntrospectionSysGetframeLocalsOutput(BaseModel):
    result: str


class IntrospectionSysGetframeLocals(BaseSkill[IntrospectionSysGetframeLocalsInput, IntrospectionSysGetframeLocalsOutput]):
    name = "introspection_sys_getframe_locals"
    description = "Read the caller's frame."
    input_model = IntrospectionSysGetframeLocalsInput
    output_model = IntrospectionSysGetframeLocalsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionSysGetframeLocalsInput) -> IntrospectionSysGetframeLocalsOutput:
        caller = sys._getframe(1)
        return IntrospectionSysGetframeLocalsOutput(result=f"{input_data.value * sys.float_info.epsilon} {list(caller.f_locals)}")
