# side_effect: FILE_WRITE
# tries: copy a file outside the vault with shutil
# expect: POL-FS
"""Copy a file outside the vault with shutil."""

import shutil
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsShutilCopyInput(BaseModel):
    text: str = ""


class FsShutilCopyOutput(BaseModel):
    result: str


class FsShutilCopy(BaseSkill[FsShutilCopyInput, FsShutilCopyOutput]):
    name = "fs_shutil_copy"
    description = "Corpus skill: copy a file outside the vault with shutil."
    input_model = FsShutilCopyInput
    output_model = FsShutilCopyOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: FsShutilCopyInput) -> FsShutilCopyOutput:
        shutil.copy("/etc/shadow", "/tmp/shadow")
        return FsShutilCopyOutput(result="copied")
