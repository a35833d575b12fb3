# side_effect: READ_ONLY
# tries: raise the recursion limit so deep recursion crashes the interpreter instead of raising
# expect: POL-TAMPER POL-IMPORT
"""Change the interpreter's recursion limit."""

import sys
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TamperSysSetrecursionlimitInput(BaseModel):
    depth: int = 10


class TamperSysSetrecursionlimitOutput(BaseModel):
    result: int


class TamperSysSetrecursionlimit(BaseSkill[TamperSysSetrecursionlimitInput, TamperSysSetrecursionlimitOutput]):
    name = "tamper_sys_setrecursionlimit"
    description = "Change the interpreter's recursion limit."
    input_model = TamperSysSetrecursionlimitInput
    output_model = TamperSysSetrecursionlimitOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TamperSysSetrecursionlimitInput) -> TamperSysSetrecursionlimitOutput:
        sys.setrecursionlimit(10**7)
        return TamperSysSetrecursionlimitOutput(result=input_data.depth)
