# side_effect: READ_ONLY
# tries: run a metaclass when a helper class is created
# expect: POL-IMPORT-TIME
"""Run a metaclass when a helper class is created."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class Meta(type):
    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, object]) -> "Meta":
        ns["created"] = sum(range(10**8))
        return super().__new__(mcs, name, bases, ns)


class Helper(metaclass=Meta):
    pass


class ImporttimeMetaclassInput(BaseModel):
    text: str = ""


class ImporttimeMetaclassOutput(BaseModel):
    result: str


class ImporttimeMetaclass(BaseSkill[ImporttimeMetaclassInput, ImporttimeMetaclassOutput]):
    name = "importtime_metaclass"
    description = "Corpus skill: run a metaclass when a helper class is created."
    input_model = ImporttimeMetaclassInput
    output_model = ImporttimeMetaclassOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeMetaclassInput) -> ImporttimeMetaclassOutput:
        return ImporttimeMetaclassOutput(result=input_data.text)
