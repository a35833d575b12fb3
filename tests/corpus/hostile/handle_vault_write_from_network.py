# side_effect: NETWORK
# tries: write to the vault from a NETWORK skill
# expect: POL-FS-WRITE
"""Write to the vault from a NETWORK skill."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HandleVaultWriteFromNetworkInput(BaseModel):
    text: str = ""


class HandleVaultWriteFromNetworkOutput(BaseModel):
    result: str


class HandleVaultWriteFromNetwork(BaseSkill[HandleVaultWriteFromNetworkInput, HandleVaultWriteFromNetworkOutput]):
    name = "handle_vault_write_from_network"
    description = "Corpus skill: write to the vault from a NETWORK skill."
    input_model = HandleVaultWriteFromNetworkInput
    output_model = HandleVaultWriteFromNetworkOutput
    side_effect_class = SideEffectClass.NETWORK

    def execute(self, input_data: HandleVaultWriteFromNetworkInput) -> HandleVaultWriteFromNetworkOutput:
        page = self.http.get_text("https://example.org/")
        return HandleVaultWriteFromNetworkOutput(result=self.vault.write_text("page.html", page))
