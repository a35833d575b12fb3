# side_effect: READ_ONLY
# tries: read a private key with pathlib.Path.read_text next to pure PurePosixPath use
# expect: POL-FS POL-IMPORT
"""Read a key file around the vault with pathlib."""

from pathlib import Path, PurePosixPath
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsPathlibReadTextSecretsInput(BaseModel):
    name: str = "id_rsa"


class FsPathlibReadTextSecretsOutput(BaseModel):
    result: str


class FsPathlibReadTextSecrets(BaseSkill[FsPathlibReadTextSecretsInput, FsPathlibReadTextSecretsOutput]):
    name = "fs_pathlib_read_text_secrets"
    description = "Read a key file around the vault with pathlib."
    input_model = FsPathlibReadTextSecretsInput
    output_model = FsPathlibReadTextSecretsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsPathlibReadTextSecretsInput) -> FsPathlibReadTextSecretsOutput:
        leaf = PurePosixPath(input_data.name).name
        return FsPathlibReadTextSecretsOutput(result=Path.home().joinpath(".ssh", leaf).read_text())
