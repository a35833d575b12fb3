# side_effect: READ_ONLY
# tries: run a custom decorator at import time
# expect: POL-IMPORT-TIME
"""Run a custom decorator at import time."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


REGISTRY: list[object] = []


def register(fn: object) -> object:
    REGISTRY.append(fn)
    return fn


@register
def helper(text: str) -> str:
    return text.upper()


class ImporttimeDecoratorRegistersInput(BaseModel):
    text: str = ""


class ImporttimeDecoratorRegistersOutput(BaseModel):
    result: str


class ImporttimeDecoratorRegisters(BaseSkill[ImporttimeDecoratorRegistersInput, ImporttimeDecoratorRegistersOutput]):
    name = "importtime_decorator_registers"
    description = "Corpus skill: run a custom decorator at import time."
    input_model = ImporttimeDecoratorRegistersInput
    output_model = ImporttimeDecoratorRegistersOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeDecoratorRegistersInput) -> ImporttimeDecoratorRegistersOutput:
        return ImporttimeDecoratorRegistersOutput(result=input_data.text)
