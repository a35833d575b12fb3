# side_effect: READ_ONLY
# tries: run a loop at module level
# expect: POL-IMPORT-TIME
"""Run a loop at module level."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


TABLE: dict[int, int] = {}
for _i in range(10**8):
    TABLE[_i] = _i


class ImporttimeModuleLoopInput(BaseModel):
    text: str = ""


class ImporttimeModuleLoopOutput(BaseModel):
    result: str


class ImporttimeModuleLoop(BaseSkill[ImporttimeModuleLoopInput, ImporttimeModuleLoopOutput]):
    name = "importtime_module_loop"
    description = "Corpus skill: run a loop at module level."
    input_model = ImporttimeModuleLoopInput
    output_model = ImporttimeModuleLoopOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeModuleLoopInput) -> ImporttimeModuleLoopOutput:
        return ImporttimeModuleLoopOutput(result=input_data.text)
