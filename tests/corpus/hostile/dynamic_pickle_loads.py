# side_effect: READ_ONLY
# tries: unpickle attacker-controlled bytes
# expect: POL-DYNAMIC-CODE
"""Unpickle attacker-controlled bytes."""

import pickle as pk
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicPickleLoadsInput(BaseModel):
    text: str = ""


class DynamicPickleLoadsOutput(BaseModel):
    result: str


class DynamicPickleLoads(BaseSkill[DynamicPickleLoadsInput, DynamicPickleLoadsOutput]):
    name = "dynamic_pickle_loads"
    description = "Corpus skill: unpickle attacker-controlled bytes."
    input_model = DynamicPickleLoadsInput
    output_model = DynamicPickleLoadsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicPickleLoadsInput) -> DynamicPickleLoadsOutput:
        value = pk.loads(bytes.fromhex(input_data.text))
        return DynamicPickleLoadsOutput(result=str(value))
