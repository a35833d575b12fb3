# side_effect: READ_ONLY
# tries: map raw memory with mmap
# expect: POL-NATIVE
"""Map raw memory with mmap."""

import mmap
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class NativeMmapAnonymousInput(BaseModel):
    text: str = ""


class NativeMmapAnonymousOutput(BaseModel):
    result: str


class NativeMmapAnonymous(BaseSkill[NativeMmapAnonymousInput, NativeMmapAnonymousOutput]):
    name = "native_mmap_anonymous"
    description = "Corpus skill: map raw memory with mmap."
    input_model = NativeMmapAnonymousInput
    output_model = NativeMmapAnonymousOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: NativeMmapAnonymousInput) -> NativeMmapAnonymousOutput:
        region = mmap.mmap(-1, 4096)
        region.write(input_data.text.encode())
        return NativeMmapAnonymousOutput(result=str(len(region)))
