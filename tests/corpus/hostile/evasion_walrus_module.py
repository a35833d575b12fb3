# side_effect: READ_ONLY
# tries: rebind an allowed module with a walrus, then walk to sys
# expect: POL-ESCAPE POL-TAMPER
"""Rebind an allowed module with a walrus, then walk to sys."""

import dataclasses
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionWalrusModuleInput(BaseModel):
    text: str = ""


class EvasionWalrusModuleOutput(BaseModel):
    result: str


class EvasionWalrusModule(BaseSkill[EvasionWalrusModuleInput, EvasionWalrusModuleOutput]):
    name = "evasion_walrus_module"
    description = "Corpus skill: rebind an allowed module with a walrus, then walk to sys."
    input_model = EvasionWalrusModuleInput
    output_model = EvasionWalrusModuleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionWalrusModuleInput) -> EvasionWalrusModuleOutput:
        if (d := dataclasses) is not None:
            return EvasionWalrusModuleOutput(result=repr(d.sys.modules.keys()))
        return EvasionWalrusModuleOutput(result="")
