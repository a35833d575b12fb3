# side_effect: READ_ONLY
# tricky: {c: i for i, c in enumerate(string.ascii_lowercase)} at module level
# family: module-tables
"""Score words by the alphabet position of their letters."""

import string
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


POSITION = {c: i for i, c in enumerate(string.ascii_lowercase, start=1)}


class TableEnumerateAlphabetInput(BaseModel):
    words: list[str]


class TableEnumerateAlphabetOutput(BaseModel):
    scores: dict[str, int]
    best: str | None


class TableEnumerateAlphabet(BaseSkill[TableEnumerateAlphabetInput, TableEnumerateAlphabetOutput]):
    name = "table_enumerate_alphabet"
    description = "Score words by the alphabet position of their letters."
    input_model = TableEnumerateAlphabetInput
    output_model = TableEnumerateAlphabetOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableEnumerateAlphabetInput) -> TableEnumerateAlphabetOutput:
        scores = {w: sum(POSITION.get(c, 0) for c in w.lower()) for w in input_data.words}
        return TableEnumerateAlphabetOutput(scores=scores, best=max(scores, key=lambda w: scores[w]) if scores else None)
