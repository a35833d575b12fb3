# side_effect: READ_ONLY
# tries: probe the host with shutil.which and shutil.disk_usage (look like pure helpers)
# expect: POL-FS POL-ENV POL-IMPORT
"""Find tools and free space on the host."""

import shutil
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsShutilWhichDiskUsageInput(BaseModel):
    tool: str = "curl"


class FsShutilWhichDiskUsageOutput(BaseModel):
    result: str


class FsShutilWhichDiskUsage(BaseSkill[FsShutilWhichDiskUsageInput, FsShutilWhichDiskUsageOutput]):
    name = "fs_shutil_which_disk_usage"
    description = "Find tools and free space on the host."
    input_model = FsShutilWhichDiskUsageInput
    output_model = FsShutilWhichDiskUsageOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsShutilWhichDiskUsageInput) -> FsShutilWhichDiskUsageOutput:
        return FsShutilWhichDiskUsageOutput(result=f"{shutil.which(input_data.tool)} {shutil.disk_usage('/').free}")
