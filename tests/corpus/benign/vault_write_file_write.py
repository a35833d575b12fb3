# side_effect: FILE_WRITE
# tricky: a FILE_WRITE skill writing through its vault handle
"""A FILE_WRITE skill writing through its vault handle."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class VaultWriteFileWriteInput(BaseModel):
    path: str
    text: str


class VaultWriteFileWriteOutput(BaseModel):
    result: str


class VaultWriteFileWrite(BaseSkill[VaultWriteFileWriteInput, VaultWriteFileWriteOutput]):
    name = "vault_write_file_write"
    description = "Corpus skill: a FILE_WRITE skill writing through its vault handle."
    input_model = VaultWriteFileWriteInput
    output_model = VaultWriteFileWriteOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: VaultWriteFileWriteInput) -> VaultWriteFileWriteOutput:
        existed = self.vault.exists(input_data.path)
        written = self.vault.write_text(input_data.path, input_data.text)
        return VaultWriteFileWriteOutput(result=f"{written} (replaced: {existed})")
