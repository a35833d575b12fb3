# side_effect: READ_ONLY
# tries: reach sys through the private _sys name of collections
# expect: POL-ESCAPE
"""Reach sys through the private _sys name of collections."""

import collections
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionPrivateModuleNameInput(BaseModel):
    text: str = ""


class EvasionPrivateModuleNameOutput(BaseModel):
    result: str


class EvasionPrivateModuleName(BaseSkill[EvasionPrivateModuleNameInput, EvasionPrivateModuleNameOutput]):
    name = "evasion_private_module_name"
    description = "Corpus skill: reach sys through the private _sys name of collections."
    input_model = EvasionPrivateModuleNameInput
    output_model = EvasionPrivateModuleNameOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionPrivateModuleNameInput) -> EvasionPrivateModuleNameOutput:
        return EvasionPrivateModuleNameOutput(result=repr(collections._sys.modules.keys()))
