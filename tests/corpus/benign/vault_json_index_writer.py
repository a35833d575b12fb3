# side_effect: FILE_WRITE
# tricky: a FILE_WRITE skill writing a JSON index through self.vault.write_text with a logger
# family: handles
"""Build a JSON index of note titles and word counts and save it in the vault."""

import json
import logging
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


logger = logging.getLogger(__name__)


class VaultJsonIndexWriterInput(BaseModel):
    pattern: str = "**/*.md"
    index_path: str = "index.json"


class VaultJsonIndexWriterOutput(BaseModel):
    written: str
    entries: int


class VaultJsonIndexWriter(BaseSkill[VaultJsonIndexWriterInput, VaultJsonIndexWriterOutput]):
    name = "vault_json_index_writer"
    description = "Build a JSON index of note titles and word counts and save it in the vault."
    input_model = VaultJsonIndexWriterInput
    output_model = VaultJsonIndexWriterOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: VaultJsonIndexWriterInput) -> VaultJsonIndexWriterOutput:
        index = []
        for path in self.vault.list_files(input_data.pattern):
            text = self.vault.read_text(path)
            title = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.startswith("#")), path)
            index.append({"path": path, "title": title, "words": len(text.split())})
        logger.debug("indexed %d notes", len(index))
        written = self.vault.write_text(input_data.index_path, json.dumps(index, indent=2, sort_keys=True))
        return VaultJsonIndexWriterOutput(written=written, entries=len(index))
