# side_effect: READ_ONLY
# tries: call a function in a default argument
# expect: POL-IMPORT-TIME
"""Call a function in a default argument."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _probe() -> str:
    return "x" * 10**9


def helper(text: str, pad: str = _probe()) -> str:
    return text + pad


class ImporttimeDefaultArgumentCallInput(BaseModel):
    text: str = ""


class ImporttimeDefaultArgumentCallOutput(BaseModel):
    result: str


class ImporttimeDefaultArgumentCall(BaseSkill[ImporttimeDefaultArgumentCallInput, ImporttimeDefaultArgumentCallOutput]):
    name = "importtime_default_argument_call"
    description = "Corpus skill: call a function in a default argument."
    input_model = ImporttimeDefaultArgumentCallInput
    output_model = ImporttimeDefaultArgumentCallOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeDefaultArgumentCallInput) -> ImporttimeDefaultArgumentCallOutput:
        return ImporttimeDefaultArgumentCallOutput(result=input_data.text)
