# side_effect: READ_ONLY
# tricky: f-strings whose literal text mentions os.system and __import__
"""F-strings whose literal text mentions os.system and __import__."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FstringMentionsOsSystemInput(BaseModel):
    text: str = ""


class FstringMentionsOsSystemOutput(BaseModel):
    result: str


class FstringMentionsOsSystem(BaseSkill[FstringMentionsOsSystemInput, FstringMentionsOsSystemOutput]):
    name = "fstring_mentions_os_system"
    description = "Corpus skill: f-strings whose literal text mentions os.system and __import__."
    input_model = FstringMentionsOsSystemInput
    output_model = FstringMentionsOsSystemOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FstringMentionsOsSystemInput) -> FstringMentionsOsSystemOutput:
        count = input_data.text.count("os.system")
        note = f"found os.system {count} times; __import__('os') is {'absent' if count == 0 else 'suspicious'}"
        return FstringMentionsOsSystemOutput(result=f"{note!r:>10}")
