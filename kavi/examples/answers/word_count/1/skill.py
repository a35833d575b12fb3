"""Count the words, lines and characters of a text."""

import re

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

WORD = re.compile(r"\S+")


class WordCountInput(BaseModel):
    text: str


class WordCountOutput(BaseModel):
    words: int
    lines: int
    characters: int


class WordCount(BaseSkill[WordCountInput, WordCountOutput]):
    name = "word_count"
    description = "Count the words, lines and characters of a text."
    input_model = WordCountInput
    output_model = WordCountOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: WordCountInput) -> WordCountOutput:
        text = input_data.text
        lines = len(text.splitlines())
        return WordCountOutput(words=len(WORD.findall(text)), lines=lines, characters=len(text))
