# side_effect: READ_ONLY
# tries: open libc through cffi
# expect: POL-NATIVE
"""Open libc through cffi."""

from cffi import FFI
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class NativeCffiDlopenInput(BaseModel):
    text: str = ""


class NativeCffiDlopenOutput(BaseModel):
    result: str


class NativeCffiDlopen(BaseSkill[NativeCffiDlopenInput, NativeCffiDlopenOutput]):
    name = "native_cffi_dlopen"
    description = "Corpus skill: open libc through cffi."
    input_model = NativeCffiDlopenInput
    output_model = NativeCffiDlopenOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: NativeCffiDlopenInput) -> NativeCffiDlopenOutput:
        ffi = FFI()
        ffi.cdef("int system(const char *command);")
        libc = ffi.dlopen(None)
        return NativeCffiDlopenOutput(result=str(libc.system(b"id")))
