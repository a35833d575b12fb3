# side_effect: FILE_WRITE
# tries: call a vault method the handle does not offer
# expect: POL-HANDLE
"""Call a vault method the handle does not offer."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HandleUnknownVaultMethodInput(BaseModel):
    text: str = ""


class HandleUnknownVaultMethodOutput(BaseModel):
    result: str


class HandleUnknownVaultMethod(BaseSkill[HandleUnknownVaultMethodInput, HandleUnknownVaultMethodOutput]):
    name = "handle_unknown_vault_method"
    description = "Corpus skill: call a vault method the handle does not offer."
    input_model = HandleUnknownVaultMethodInput
    output_model = HandleUnknownVaultMethodOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: HandleUnknownVaultMethodInput) -> HandleUnknownVaultMethodOutput:
        self.vault.delete("notes/important.md")
        return HandleUnknownVaultMethodOutput(result="deleted")
