# side_effect: FILE_WRITE
# tricky: configparser.read_string on vault text, the converted document written back through the vault
# family: handles
"""Convert an INI note in the vault into a TOML-like note beside it."""

import configparser
import posixpath
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class VaultIniToTomlWriterInput(BaseModel):
    path: str


class VaultIniToTomlWriterOutput(BaseModel):
    written: str
    sections: int


class VaultIniToTomlWriter(BaseSkill[VaultIniToTomlWriterInput, VaultIniToTomlWriterOutput]):
    name = "vault_ini_to_toml_writer"
    description = "Convert an INI note in the vault into a TOML-like note beside it."
    input_model = VaultIniToTomlWriterInput
    output_model = VaultIniToTomlWriterOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: VaultIniToTomlWriterInput) -> VaultIniToTomlWriterOutput:
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(self.vault.read_text(input_data.path))
        lines: list[str] = []
        for section in parser.sections():
            lines.append(f"[{section}]")
            lines += [f'{key} = "{value}"' for key, value in parser.items(section)]
            lines.append("")
        target = posixpath.splitext(input_data.path)[0] + ".toml"
        return VaultIniToTomlWriterOutput(written=self.vault.write_text(target, "\n".join(lines)), sections=len(parser.sections()))
