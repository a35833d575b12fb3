# side_effect: FILE_WRITE
# tries: delete a file with os.remove
# expect: POL-PROCESS POL-FS
"""Delete a file with os.remove."""

from os import remove
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsOsRemoveInput(BaseModel):
    text: str = ""


class FsOsRemoveOutput(BaseModel):
    result: str


class FsOsRemove(BaseSkill[FsOsRemoveInput, FsOsRemoveOutput]):
    name = "fs_os_remove"
    description = "Corpus skill: delete a file with os.remove."
    input_model = FsOsRemoveInput
    output_model = FsOsRemoveOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: FsOsRemoveInput) -> FsOsRemoveOutput:
        remove(input_data.text)
        return FsOsRemoveOutput(result="removed")
