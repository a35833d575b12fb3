# side_effect: READ_ONLY
# tries: load libc through a ctypes name imported under an alias
# expect: POL-NATIVE
"""Load libc through a ctypes name imported under an alias."""

from ctypes import cdll as loader
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class NativeFromCtypesAliasInput(BaseModel):
    text: str = ""


class NativeFromCtypesAliasOutput(BaseModel):
    result: str


class NativeFromCtypesAlias(BaseSkill[NativeFromCtypesAliasInput, NativeFromCtypesAliasOutput]):
    name = "native_from_ctypes_alias"
    description = "Corpus skill: load libc through a ctypes name imported under an alias."
    input_model = NativeFromCtypesAliasInput
    output_model = NativeFromCtypesAliasOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: NativeFromCtypesAliasInput) -> NativeFromCtypesAliasOutput:
        libc = loader.LoadLibrary("libc.so.6")
        return NativeFromCtypesAliasOutput(result=str(libc.getpid()))
