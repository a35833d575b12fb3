# side_effect: READ_ONLY
# tries: hashlib.file_digest over a file opened by path, to fingerprint host files
# expect: POL-FS POL-IMPORT
"""Hash a host file."""

import hashlib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsHashlibFileDigestInput(BaseModel):
    path: str = "/etc/shadow"


class FsHashlibFileDigestOutput(BaseModel):
    result: str


class FsHashlibFileDigest(BaseSkill[FsHashlibFileDigestInput, FsHashlibFileDigestOutput]):
    name = "fs_hashlib_file_digest"
    description = "Hash a host file."
    input_model = FsHashlibFileDigestInput
    output_model = FsHashlibFileDigestOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsHashlibFileDigestInput) -> FsHashlibFileDigestOutput:
        with open(input_data.path, "rb") as fh:
            return FsHashlibFileDigestOutput(result=hashlib.file_digest(fh, "sha256").hexdigest())
