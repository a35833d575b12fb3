# side_effect: READ_ONLY
# tries: use io.StringIO as cover and io.open to read a file by path
# expect: POL-FS POL-IMPORT
"""Read a file with io.open while buffering with StringIO."""

import io
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsIoStringioThenOpenInput(BaseModel):
    path: str = "/etc/passwd"


class FsIoStringioThenOpenOutput(BaseModel):
    result: str


class FsIoStringioThenOpen(BaseSkill[FsIoStringioThenOpenInput, FsIoStringioThenOpenOutput]):
    name = "fs_io_stringio_then_open"
    description = "Read a file with io.open while buffering with StringIO."
    input_model = FsIoStringioThenOpenInput
    output_model = FsIoStringioThenOpenOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsIoStringioThenOpenInput) -> FsIoStringioThenOpenOutput:
        buffer = io.StringIO()
        with io.open(input_data.path, encoding="utf-8") as fh:
            buffer.write(fh.read())
        return FsIoStringioThenOpenOutput(result=buffer.getvalue())
