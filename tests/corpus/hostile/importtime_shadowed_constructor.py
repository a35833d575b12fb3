# side_effect: READ_ONLY
# tries: define its own frozenset so a module constant runs code
# expect: POL-IMPORT-TIME
"""Define its own frozenset so a module constant runs code."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def frozenset(*items: object) -> tuple[object, ...]:
    sum(range(10**9))
    return items


NAMES = frozenset(("a", "b"))


class ImporttimeShadowedConstructorInput(BaseModel):
    text: str = ""


class ImporttimeShadowedConstructorOutput(BaseModel):
    result: str


class ImporttimeShadowedConstructor(BaseSkill[ImporttimeShadowedConstructorInput, ImporttimeShadowedConstructorOutput]):
    name = "importtime_shadowed_constructor"
    description = "Corpus skill: define its own frozenset so a module constant runs code."
    input_model = ImporttimeShadowedConstructorInput
    output_model = ImporttimeShadowedConstructorOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeShadowedConstructorInput) -> ImporttimeShadowedConstructorOutput:
        return ImporttimeShadowedConstructorOutput(result=input_data.text)
