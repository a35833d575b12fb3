"""Word, line and character counts of a text (written independently from the spec)."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

# Line breaks other than "\n" (carriage returns, form feeds, Unicode separators): the spec does not say whether they
# end a line, so such a text is refused rather than guessed at.
OTHER_BREAKS = frozenset("\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


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
        if any(ch in OTHER_BREAKS for ch in text):
            raise ValueError("the text holds a line break other than a newline")
        pieces = text.split("\n")
        if pieces and pieces[-1] == "":
            pieces.pop()  # a final newline ends the last line; it does not start another
        return WordCountOutput(words=len(text.split()), lines=len(pieces), characters=len(text))
