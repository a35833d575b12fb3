# side_effect: READ_ONLY
# tries: do work at import time through a module-level call
# expect: POL-IMPORT-TIME
"""Do work at import time through a module-level call."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _warm() -> int:
    return sum(i * i for i in range(10**9))


WARM = _warm()


class ImporttimeModuleLevelCallInput(BaseModel):
    text: str = ""


class ImporttimeModuleLevelCallOutput(BaseModel):
    result: str


class ImporttimeModuleLevelCall(BaseSkill[ImporttimeModuleLevelCallInput, ImporttimeModuleLevelCallOutput]):
    name = "importtime_module_level_call"
    description = "Corpus skill: do work at import time through a module-level call."
    input_model = ImporttimeModuleLevelCallInput
    output_model = ImporttimeModuleLevelCallOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeModuleLevelCallInput) -> ImporttimeModuleLevelCallOutput:
        return ImporttimeModuleLevelCallOutput(result=input_data.text)
