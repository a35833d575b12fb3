# side_effect: READ_ONLY
# tricky: tomllib.loads on front matter read through the vault handle
# family: handles
"""Read the TOML front matter of notes and index them by tag."""

import tomllib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class VaultFrontmatterTomllibInput(BaseModel):
    pattern: str = "**/*.md"


class VaultFrontmatterTomllibOutput(BaseModel):
    tags: dict[str, list[str]]
    without_front_matter: list[str]


class VaultFrontmatterTomllib(BaseSkill[VaultFrontmatterTomllibInput, VaultFrontmatterTomllibOutput]):
    name = "vault_frontmatter_tomllib"
    description = "Read the TOML front matter of notes and index them by tag."
    input_model = VaultFrontmatterTomllibInput
    output_model = VaultFrontmatterTomllibOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: VaultFrontmatterTomllibInput) -> VaultFrontmatterTomllibOutput:
        tags: dict[str, list[str]] = {}
        missing: list[str] = []
        for path in self.vault.list_files(input_data.pattern):
            text = self.vault.read_text(path)
            if not text.startswith("+++\n"):
                missing.append(path)
                continue
            block = text[4:].split("\n+++", 1)[0]
            try:
                meta = tomllib.loads(block)
            except tomllib.TOMLDecodeError:
                missing.append(path)
                continue
            for tag in meta.get("tags", []):
                tags.setdefault(str(tag), []).append(path)
        return VaultFrontmatterTomllibOutput(tags=tags, without_front_matter=missing)
