# side_effect: FILE_WRITE
# tries: write raw bytes with io.FileIO around the vault handle
# expect: POL-FS POL-FS-WRITE POL-IMPORT
"""Write a file with io.FileIO."""

import io
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsIoFileioWriteInput(BaseModel):
    text: str = "x"


class FsIoFileioWriteOutput(BaseModel):
    result: int


class FsIoFileioWrite(BaseSkill[FsIoFileioWriteInput, FsIoFileioWriteOutput]):
    name = "fs_io_fileio_write"
    description = "Write a file with io.FileIO."
    input_model = FsIoFileioWriteInput
    output_model = FsIoFileioWriteOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: FsIoFileioWriteInput) -> FsIoFileioWriteOutput:
        with io.FileIO("/tmp/kavi-dropped.sh", "w") as fh:
            written = fh.write(input_data.text.encode())
        return FsIoFileioWriteOutput(result=written)
