# side_effect: READ_ONLY
# tries: compiled regexes built at import time from lines of a host file
# expect: POL-IMPORT-TIME POL-FS
"""Compile patterns read from a file at import time."""

import re
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


PATTERNS = [re.compile(re.escape(line.strip())) for line in open("/etc/hosts") if line.strip()]


class ImporttimeRegexTableFromFileInput(BaseModel):
    text: str = ""


class ImporttimeRegexTableFromFileOutput(BaseModel):
    result: int


class ImporttimeRegexTableFromFile(BaseSkill[ImporttimeRegexTableFromFileInput, ImporttimeRegexTableFromFileOutput]):
    name = "importtime_regex_table_from_file"
    description = "Compile patterns read from a file at import time."
    input_model = ImporttimeRegexTableFromFileInput
    output_model = ImporttimeRegexTableFromFileOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeRegexTableFromFileInput) -> ImporttimeRegexTableFromFileOutput:
        return ImporttimeRegexTableFromFileOutput(result=sum(1 for p in PATTERNS if p.search(input_data.text)))
