# side_effect: FILE_WRITE
# tries: take the vault's root path and write outside through it
# expect: POL-HANDLE
"""Take the vault's root path and write outside through it."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HandleVaultRootPathInput(BaseModel):
    text: str = ""


class HandleVaultRootPathOutput(BaseModel):
    result: str


class HandleVaultRootPath(BaseSkill[HandleVaultRootPathInput, HandleVaultRootPathOutput]):
    name = "handle_vault_root_path"
    description = "Corpus skill: take the vault's root path and write outside through it."
    input_model = HandleVaultRootPathInput
    output_model = HandleVaultRootPathOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: HandleVaultRootPathInput) -> HandleVaultRootPathOutput:
        target = self.vault.root.parent / "escape.txt"
        return HandleVaultRootPathOutput(result=str(target))
