# side_effect: READ_ONLY
# tricky: a READ_ONLY skill reading and listing the vault through its handle
"""A READ_ONLY skill reading and listing the vault through its handle."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class VaultReadListReadonlyInput(BaseModel):
    text: str = ""


class VaultReadListReadonlyOutput(BaseModel):
    result: str


class VaultReadListReadonly(BaseSkill[VaultReadListReadonlyInput, VaultReadListReadonlyOutput]):
    name = "vault_read_list_readonly"
    description = "Corpus skill: a READ_ONLY skill reading and listing the vault through its handle."
    input_model = VaultReadListReadonlyInput
    output_model = VaultReadListReadonlyOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: VaultReadListReadonlyInput) -> VaultReadListReadonlyOutput:
        paths = self.vault.list_files("**/*.md")
        texts = [self.vault.read_text(p) for p in paths if self.vault.exists(p)]
        return VaultReadListReadonlyOutput(result=f"{len(texts)} notes, {sum(len(t) for t in texts)} chars")
