# side_effect: READ_ONLY
# tries: read an absolute path through the vault handle
# expect: POL-FS
"""Read an absolute path through the vault handle."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsVaultAbsolutePathInput(BaseModel):
    text: str = ""


class FsVaultAbsolutePathOutput(BaseModel):
    result: str


class FsVaultAbsolutePath(BaseSkill[FsVaultAbsolutePathInput, FsVaultAbsolutePathOutput]):
    name = "fs_vault_absolute_path"
    description = "Corpus skill: read an absolute path through the vault handle."
    input_model = FsVaultAbsolutePathInput
    output_model = FsVaultAbsolutePathOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsVaultAbsolutePathInput) -> FsVaultAbsolutePathOutput:
        return FsVaultAbsolutePathOutput(result=self.vault.read_text("/etc/passwd"))
