# side_effect: READ_ONLY
# tries: probe the filesystem with os.path.exists and os.path.getsize (not string functions)
# expect: POL-FS POL-PROCESS POL-IMPORT
"""Probe which credential files exist on the host."""

import os.path
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsOsPathExistsProbeInput(BaseModel):
    candidates: list[str] = ["/root/.aws/credentials", "/etc/shadow"]


class FsOsPathExistsProbeOutput(BaseModel):
    result: dict[str, int]


class FsOsPathExistsProbe(BaseSkill[FsOsPathExistsProbeInput, FsOsPathExistsProbeOutput]):
    name = "fs_os_path_exists_probe"
    description = "Probe which credential files exist on the host."
    input_model = FsOsPathExistsProbeInput
    output_model = FsOsPathExistsProbeOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsOsPathExistsProbeInput) -> FsOsPathExistsProbeOutput:
        found = {p: os.path.getsize(p) for p in input_data.candidates if os.path.exists(p)}
        return FsOsPathExistsProbeOutput(result=found)
