# side_effect: READ_ONLY
# tries: hide an allowed module in a tuple so attribute walks are not resolved
# expect: POL-ESCAPE
"""Hide an allowed module in a tuple so attribute walks are not resolved."""

import typing
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionModuleInTupleInput(BaseModel):
    text: str = ""


class EvasionModuleInTupleOutput(BaseModel):
    result: str


class EvasionModuleInTuple(BaseSkill[EvasionModuleInTupleInput, EvasionModuleInTupleOutput]):
    name = "evasion_module_in_tuple"
    description = "Corpus skill: hide an allowed module in a tuple so attribute walks are not resolved."
    input_model = EvasionModuleInTupleInput
    output_model = EvasionModuleInTupleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionModuleInTupleInput) -> EvasionModuleInTupleOutput:
        mods = (typing,)
        return EvasionModuleInTupleOutput(result=repr(mods[0].sys.modules.keys()))
