# side_effect: READ_ONLY
# tries: gzip.open a file by path (gzip.decompress is the pure part)
# expect: POL-FS POL-IMPORT
"""Read a gzip file from disk."""

import gzip
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsGzipOpenPathInput(BaseModel):
    path: str = "/var/log/syslog.2.gz"


class FsGzipOpenPathOutput(BaseModel):
    result: str


class FsGzipOpenPath(BaseSkill[FsGzipOpenPathInput, FsGzipOpenPathOutput]):
    name = "fs_gzip_open_path"
    description = "Read a gzip file from disk."
    input_model = FsGzipOpenPathInput
    output_model = FsGzipOpenPathOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsGzipOpenPathInput) -> FsGzipOpenPathOutput:
        with gzip.open(input_data.path, "rt") as fh:
            return FsGzipOpenPathOutput(result=fh.read(4096))
