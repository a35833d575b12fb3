# side_effect: READ_ONLY
# tricky: a helper whose default argument is a pure constructor (re.compile) evaluated at def time
# family: module-tables
"""Tokenise text into words with an overridable pattern and compare two texts word by word."""

import difflib
import re
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _words(text: str, pattern: re.Pattern[str] = re.compile(r"\w+")) -> list[str]:
    return pattern.findall(text.lower())


class TableDifflibMatcherDefaultInput(BaseModel):
    a: str
    b: str


class TableDifflibMatcherDefaultOutput(BaseModel):
    similarity: float
    changes: list[str]


class TableDifflibMatcherDefault(BaseSkill[TableDifflibMatcherDefaultInput, TableDifflibMatcherDefaultOutput]):
    name = "table_difflib_matcher_default"
    description = "Tokenise text into words with an overridable pattern and compare two texts word by word."
    input_model = TableDifflibMatcherDefaultInput
    output_model = TableDifflibMatcherDefaultOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableDifflibMatcherDefaultInput) -> TableDifflibMatcherDefaultOutput:
        wa, wb = _words(input_data.a), _words(input_data.b)
        matcher = difflib.SequenceMatcher(a=wa, b=wb, autojunk=False)
        changes = [f"{tag}: {' '.join(wa[i1:i2])} -> {' '.join(wb[j1:j2])}"
                   for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
        return TableDifflibMatcherDefaultOutput(similarity=round(matcher.ratio(), 4), changes=changes)
