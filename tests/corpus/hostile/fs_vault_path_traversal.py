# side_effect: READ_ONLY
# tries: climb out of the vault with a literal '..' path
# expect: POL-FS
"""Climb out of the vault with a literal '..' path."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsVaultPathTraversalInput(BaseModel):
    text: str = ""


class FsVaultPathTraversalOutput(BaseModel):
    result: str


class FsVaultPathTraversal(BaseSkill[FsVaultPathTraversalInput, FsVaultPathTraversalOutput]):
    name = "fs_vault_path_traversal"
    description = "Corpus skill: climb out of the vault with a literal '..' path."
    input_model = FsVaultPathTraversalInput
    output_model = FsVaultPathTraversalOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsVaultPathTraversalInput) -> FsVaultPathTraversalOutput:
        return FsVaultPathTraversalOutput(result=self.vault.read_text("../../../etc/passwd"))
