# side_effect: READ_ONLY
# tries: rebind an allowed decorator name to its own function
# expect: POL-IMPORT-TIME
"""Rebind an allowed decorator name to its own function."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _record(fn: object) -> object:
    sum(range(10**9))
    return fn


property = _record


class Helper:
    @property
    def value(self) -> int:
        return 1


class ImporttimeShadowedDecoratorInput(BaseModel):
    text: str = ""


class ImporttimeShadowedDecoratorOutput(BaseModel):
    result: str


class ImporttimeShadowedDecorator(BaseSkill[ImporttimeShadowedDecoratorInput, ImporttimeShadowedDecoratorOutput]):
    name = "importtime_shadowed_decorator"
    description = "Corpus skill: rebind an allowed decorator name to its own function."
    input_model = ImporttimeShadowedDecoratorInput
    output_model = ImporttimeShadowedDecoratorOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeShadowedDecoratorInput) -> ImporttimeShadowedDecoratorOutput:
        return ImporttimeShadowedDecoratorOutput(result=input_data.text)
