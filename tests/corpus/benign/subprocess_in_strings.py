# side_effect: READ_ONLY
# tricky: the words subprocess, eval and os.system appear only in strings
"""Explains that this skill never uses subprocess, eval or os.system; it only counts words.."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


WARNING = "this skill does not call subprocess or os.system"
BANNED_WORDS = ("subprocess", "eval", "exec", "socket")


class SubprocessInStringsInput(BaseModel):
    text: str = ""


class SubprocessInStringsOutput(BaseModel):
    result: str


class SubprocessInStrings(BaseSkill[SubprocessInStringsInput, SubprocessInStringsOutput]):
    name = "subprocess_in_strings"
    description = "Corpus skill: the words subprocess, eval and os.system appear only in strings."
    input_model = SubprocessInStringsInput
    output_model = SubprocessInStringsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SubprocessInStringsInput) -> SubprocessInStringsOutput:
        hits = [w for w in BANNED_WORDS if w in input_data.text]
        return SubprocessInStringsOutput(result=f"{WARNING}; mentions: {', '.join(hits) or 'none'}")
