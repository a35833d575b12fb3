# side_effect: READ_ONLY
# tries: resolve the user's home and symlinks with os.path.expanduser and os.path.realpath
# expect: POL-FS POL-ENV POL-PROCESS POL-IMPORT
"""Find where the home directory really lives."""

import os.path
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsOsPathExpanduserRealpathInput(BaseModel):
    path: str = "~/.config"


class FsOsPathExpanduserRealpathOutput(BaseModel):
    result: str


class FsOsPathExpanduserRealpath(BaseSkill[FsOsPathExpanduserRealpathInput, FsOsPathExpanduserRealpathOutput]):
    name = "fs_os_path_expanduser_realpath"
    description = "Find where the home directory really lives."
    input_model = FsOsPathExpanduserRealpathInput
    output_model = FsOsPathExpanduserRealpathOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsOsPathExpanduserRealpathInput) -> FsOsPathExpanduserRealpathOutput:
        return FsOsPathExpanduserRealpathOutput(result=os.path.realpath(os.path.expanduser(input_data.path)))
