# side_effect: READ_ONLY
# tries: walk to the caller's frame with sys._getframe
# expect: POL-TAMPER POL-INTROSPECTION
"""Walk to the caller's frame with sys._getframe."""

import sys
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionSysGetframeInput(BaseModel):
    text: str = ""


class IntrospectionSysGetframeOutput(BaseModel):
    result: str


class IntrospectionSysGetframe(BaseSkill[IntrospectionSysGetframeInput, IntrospectionSysGetframeOutput]):
    name = "introspection_sys_getframe"
    description = "Corpus skill: walk to the caller's frame with sys._getframe."
    input_model = IntrospectionSysGetframeInput
    output_model = IntrospectionSysGetframeOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionSysGetframeInput) -> IntrospectionSysGetframeOutput:
        caller = sys._getframe(1)
        return IntrospectionSysGetframeOutput(result=repr(caller.f_locals))
