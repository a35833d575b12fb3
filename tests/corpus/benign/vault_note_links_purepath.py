# side_effect: READ_ONLY
# tricky: PurePosixPath and posixpath.normpath resolve relative links between notes read through the vault
# family: handles
"""Find the links between notes that point at notes which do not exist."""

import posixpath
import re
from pathlib import PurePosixPath
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


LINK = re.compile(r"\[[^\]]*\]\(([^)#\s]+)\)")


class VaultNoteLinksPurepathInput(BaseModel):
    pattern: str = "**/*.md"


class VaultNoteLinksPurepathOutput(BaseModel):
    broken: dict[str, list[str]]
    checked: int


class VaultNoteLinksPurepath(BaseSkill[VaultNoteLinksPurepathInput, VaultNoteLinksPurepathOutput]):
    name = "vault_note_links_purepath"
    description = "Find the links between notes that point at notes which do not exist."
    input_model = VaultNoteLinksPurepathInput
    output_model = VaultNoteLinksPurepathOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: VaultNoteLinksPurepathInput) -> VaultNoteLinksPurepathOutput:
        broken: dict[str, list[str]] = {}
        checked = 0
        for path in self.vault.list_files(input_data.pattern):
            folder = PurePosixPath(path).parent
            for target in LINK.findall(self.vault.read_text(path)):
                if "://" in target:
                    continue
                checked += 1
                resolved = posixpath.normpath(str(folder / target))
                if resolved.startswith("../") or not self.vault.exists(resolved):
                    broken.setdefault(path, []).append(target)
        return VaultNoteLinksPurepathOutput(broken=broken, checked=checked)
