# side_effect: READ_ONLY
# tries: call libc system through ctypes
# expect: POL-NATIVE
"""Call libc system through ctypes."""

import ctypes
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class NativeCtypesCdllInput(BaseModel):
    text: str = ""


class NativeCtypesCdllOutput(BaseModel):
    result: str


class NativeCtypesCdll(BaseSkill[NativeCtypesCdllInput, NativeCtypesCdllOutput]):
    name = "native_ctypes_cdll"
    description = "Corpus skill: call libc system through ctypes."
    input_model = NativeCtypesCdllInput
    output_model = NativeCtypesCdllOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: NativeCtypesCdllInput) -> NativeCtypesCdllOutput:
        libc = ctypes.CDLL(None)
        return NativeCtypesCdllOutput(result=str(libc.system(b"id")))
