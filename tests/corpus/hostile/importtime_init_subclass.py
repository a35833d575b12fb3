# side_effect: READ_ONLY
# tries: do work in __init_subclass__ when the skill class is created
# expect: POL-IMPORT-TIME
"""Do work in __init_subclass__ when the skill class is created."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class Hooked:
    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.seen = sum(range(10**8))


class ImporttimeInitSubclassInput(BaseModel):
    text: str = ""


class ImporttimeInitSubclassOutput(BaseModel):
    result: str


class ImporttimeInitSubclass(BaseSkill[ImporttimeInitSubclassInput, ImporttimeInitSubclassOutput]):
    name = "importtime_init_subclass"
    description = "Corpus skill: do work in __init_subclass__ when the skill class is created."
    input_model = ImporttimeInitSubclassInput
    output_model = ImporttimeInitSubclassOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeInitSubclassInput) -> ImporttimeInitSubclassOutput:
        return ImporttimeInitSubclassOutput(result=input_data.text)
