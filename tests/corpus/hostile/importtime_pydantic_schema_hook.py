# side_effect: READ_ONLY
# tries: run a pydantic schema hook while the model class is built
# expect: POL-IMPORT-TIME
"""Run a pydantic schema hook while the model class is built."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class Sneaky:
    @classmethod
    def __get_pydantic_core_schema__(cls, source: object, handler: object) -> object:
        sum(range(10**9))
        raise ValueError("never")


class ImporttimePydanticSchemaHookInput(BaseModel):
    text: str = ""
    extra: Sneaky | None = None


class ImporttimePydanticSchemaHookOutput(BaseModel):
    result: str


class ImporttimePydanticSchemaHook(BaseSkill[ImporttimePydanticSchemaHookInput, ImporttimePydanticSchemaHookOutput]):
    name = "importtime_pydantic_schema_hook"
    description = "Corpus skill: run a pydantic schema hook while the model class is built."
    input_model = ImporttimePydanticSchemaHookInput
    output_model = ImporttimePydanticSchemaHookOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimePydanticSchemaHookInput) -> ImporttimePydanticSchemaHookOutput:
        return ImporttimePydanticSchemaHookOutput(result=input_data.text)
