# side_effect: READ_ONLY
# tricky: difflib.get_close_matches against a module-level vocabulary built with sorted(set(...))
# family: text-formats
"""Suggest the closest known command names for a misspelt one."""

import difflib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


COMMANDS = sorted(set("status commit push pull fetch merge rebase log diff show branch checkout".split()))


class DifflibSpellingSuggestInput(BaseModel):
    word: str
    limit: int = 3


class DifflibSpellingSuggestOutput(BaseModel):
    suggestions: list[str]
    exact: bool


class DifflibSpellingSuggest(BaseSkill[DifflibSpellingSuggestInput, DifflibSpellingSuggestOutput]):
    name = "difflib_spelling_suggest"
    description = "Suggest the closest known command names for a misspelt one."
    input_model = DifflibSpellingSuggestInput
    output_model = DifflibSpellingSuggestOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DifflibSpellingSuggestInput) -> DifflibSpellingSuggestOutput:
        word = input_data.word.strip().lower()
        matches = difflib.get_close_matches(word, COMMANDS, n=max(1, input_data.limit), cutoff=0.6)
        return DifflibSpellingSuggestOutput(suggestions=matches, exact=word in COMMANDS)
