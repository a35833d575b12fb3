# side_effect: READ_ONLY
# tries: getattr with a name taken from the input
# expect: POL-ESCAPE
"""Getattr with a name taken from the input."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionGetattrComputedInput(BaseModel):
    text: str = ""


class EvasionGetattrComputedOutput(BaseModel):
    result: str


class EvasionGetattrComputed(BaseSkill[EvasionGetattrComputedInput, EvasionGetattrComputedOutput]):
    name = "evasion_getattr_computed"
    description = "Corpus skill: getattr with a name taken from the input."
    input_model = EvasionGetattrComputedInput
    output_model = EvasionGetattrComputedOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionGetattrComputedInput) -> EvasionGetattrComputedOutput:
        return EvasionGetattrComputedOutput(result=repr(getattr(self, input_data.text)))
