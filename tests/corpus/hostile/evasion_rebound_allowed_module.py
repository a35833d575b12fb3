# side_effect: READ_ONLY
# tries: rebind typing to a new name, then reach sys through it
# expect: POL-TAMPER
"""Rebind typing to a new name, then reach sys through it."""

import typing
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionReboundAllowedModuleInput(BaseModel):
    text: str = ""


class EvasionReboundAllowedModuleOutput(BaseModel):
    result: str


class EvasionReboundAllowedModule(BaseSkill[EvasionReboundAllowedModuleInput, EvasionReboundAllowedModuleOutput]):
    name = "evasion_rebound_allowed_module"
    description = "Corpus skill: rebind typing to a new name, then reach sys through it."
    input_model = EvasionReboundAllowedModuleInput
    output_model = EvasionReboundAllowedModuleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionReboundAllowedModuleInput) -> EvasionReboundAllowedModuleOutput:
        t = typing
        return EvasionReboundAllowedModuleOutput(result=repr(t.sys.modules.keys()))
