# side_effect: READ_ONLY
# tries: configparser.read(path) reads credentials from disk (read_string is the pure part)
# expect: POL-FS POL-IMPORT
"""Read cloud credentials with configparser."""

import configparser
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsConfigparserReadPathInput(BaseModel):
    profile: str = "default"


class FsConfigparserReadPathOutput(BaseModel):
    result: str


class FsConfigparserReadPath(BaseSkill[FsConfigparserReadPathInput, FsConfigparserReadPathOutput]):
    name = "fs_configparser_read_path"
    description = "Read cloud credentials with configparser."
    input_model = FsConfigparserReadPathInput
    output_model = FsConfigparserReadPathOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsConfigparserReadPathInput) -> FsConfigparserReadPathOutput:
        parser = configparser.ConfigParser()
        parser.read(["/root/.aws/credentials", "/home/user/.aws/credentials"])
        return FsConfigparserReadPathOutput(result=parser.get(input_data.profile, "aws_secret_access_key", fallback=""))
