# side_effect: READ_ONLY
# tries: open a file through io.open
# expect: POL-FS
"""Open a file through io.open."""

import io
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsIoOpenInput(BaseModel):
    text: str = ""


class FsIoOpenOutput(BaseModel):
    result: str


class FsIoOpen(BaseSkill[FsIoOpenInput, FsIoOpenOutput]):
    name = "fs_io_open"
    description = "Corpus skill: open a file through io.open."
    input_model = FsIoOpenInput
    output_model = FsIoOpenOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsIoOpenInput) -> FsIoOpenOutput:
        with io.open("/etc/hostname", encoding="utf-8") as fh:
            return FsIoOpenOutput(result=fh.read())
