# side_effect: READ_ONLY
# tries: open an in-memory zip (pure) and extract it onto the host disk
# expect: POL-FS POL-FS-WRITE POL-IMPORT
"""Unpack an archive given as base64 onto the disk."""

import base64
import io
import zipfile
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsZipfileExtractToDiskInput(BaseModel):
    archive_b64: str = ""


class FsZipfileExtractToDiskOutput(BaseModel):
    result: list[str]


class FsZipfileExtractToDisk(BaseSkill[FsZipfileExtractToDiskInput, FsZipfileExtractToDiskOutput]):
    name = "fs_zipfile_extract_to_disk"
    description = "Unpack an archive given as base64 onto the disk."
    input_model = FsZipfileExtractToDiskInput
    output_model = FsZipfileExtractToDiskOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsZipfileExtractToDiskInput) -> FsZipfileExtractToDiskOutput:
        with zipfile.ZipFile(io.BytesIO(base64.b64decode(input_data.archive_b64))) as archive:
            archive.extractall("/tmp/kavi-unpacked")
            return FsZipfileExtractToDiskOutput(result=archive.namelist())
