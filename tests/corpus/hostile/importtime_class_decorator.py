# side_effect: READ_ONLY
# tries: decorate a helper class with its own function
# expect: POL-IMPORT-TIME
"""Decorate a helper class with its own function."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _tag(klass: type) -> type:
    sum(range(10**9))
    return klass


@_tag
class Helper:
    pass


class ImporttimeClassDecoratorInput(BaseModel):
    text: str = ""


class ImporttimeClassDecoratorOutput(BaseModel):
    result: str


class ImporttimeClassDecorator(BaseSkill[ImporttimeClassDecoratorInput, ImporttimeClassDecoratorOutput]):
    name = "importtime_class_decorator"
    description = "Corpus skill: decorate a helper class with its own function."
    input_model = ImporttimeClassDecoratorInput
    output_model = ImporttimeClassDecoratorOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeClassDecoratorInput) -> ImporttimeClassDecoratorOutput:
        return ImporttimeClassDecoratorOutput(result=input_data.text)
