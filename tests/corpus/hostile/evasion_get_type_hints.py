# side_effect: READ_ONLY
# tries: evaluate string annotations at run time with typing.get_type_hints
# expect: POL-DYNAMIC-CODE
"""Evaluate string annotations at run time with typing.get_type_hints."""

import typing
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionGetTypeHintsInput(BaseModel):
    text: str = ""


class EvasionGetTypeHintsOutput(BaseModel):
    result: str


class EvasionGetTypeHints(BaseSkill[EvasionGetTypeHintsInput, EvasionGetTypeHintsOutput]):
    name = "evasion_get_type_hints"
    description = "Corpus skill: evaluate string annotations at run time with typing.get_type_hints."
    input_model = EvasionGetTypeHintsInput
    output_model = EvasionGetTypeHintsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionGetTypeHintsInput) -> EvasionGetTypeHintsOutput:
        def holder(x: "int") -> None:
            return None

        return EvasionGetTypeHintsOutput(result=repr(typing.get_type_hints(holder)))
