# side_effect: READ_ONLY
# tricky: subscripts by variables on dicts, strings and module constants
"""Subscripts by variables on dicts, strings and module constants."""

import string
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IndexingWithVariablesInput(BaseModel):
    text: str = ""


class IndexingWithVariablesOutput(BaseModel):
    result: str


class IndexingWithVariables(BaseSkill[IndexingWithVariablesInput, IndexingWithVariablesOutput]):
    name = "indexing_with_variables"
    description = "Corpus skill: subscripts by variables on dicts, strings and module constants."
    input_model = IndexingWithVariablesInput
    output_model = IndexingWithVariablesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IndexingWithVariablesInput) -> IndexingWithVariablesOutput:
        counts: dict[str, int] = {}
        for ch in input_data.text:
            counts[ch] = counts.get(ch, 0) + 1
        key = max(counts, key=counts.get) if counts else "a"
        letter = string.ascii_lowercase[len(counts) % 26]
        return IndexingWithVariablesOutput(result=f"{key}:{counts.get(key, 0)}:{letter}:{input_data.text[1:-1]}")
