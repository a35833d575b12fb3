# side_effect: READ_ONLY
# tries: compute in the class body at import time
# expect: POL-IMPORT-TIME
"""Compute in the class body at import time."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ImporttimeClassBodyCallInput(BaseModel):
    text: str = ""


class ImporttimeClassBodyCallOutput(BaseModel):
    result: str


class ImporttimeClassBodyCall(BaseSkill[ImporttimeClassBodyCallInput, ImporttimeClassBodyCallOutput]):
    name = "importtime_class_body_call"
    description = "Corpus skill: compute in the class body at import time."
    input_model = ImporttimeClassBodyCallInput
    output_model = ImporttimeClassBodyCallOutput
    side_effect_class = SideEffectClass.READ_ONLY

    warm = sum(range(10**9))

    def execute(self, input_data: ImporttimeClassBodyCallInput) -> ImporttimeClassBodyCallOutput:
        return ImporttimeClassBodyCallOutput(result=input_data.text)
