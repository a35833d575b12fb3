# side_effect: READ_ONLY
# tries: call eval through the builtins module
# expect: POL-TAMPER POL-DYNAMIC-CODE
"""Call eval through the builtins module."""

import builtins
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicBuiltinsModuleInput(BaseModel):
    text: str = ""


class DynamicBuiltinsModuleOutput(BaseModel):
    result: str


class DynamicBuiltinsModule(BaseSkill[DynamicBuiltinsModuleInput, DynamicBuiltinsModuleOutput]):
    name = "dynamic_builtins_module"
    description = "Corpus skill: call eval through the builtins module."
    input_model = DynamicBuiltinsModuleInput
    output_model = DynamicBuiltinsModuleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicBuiltinsModuleInput) -> DynamicBuiltinsModuleOutput:
        return DynamicBuiltinsModuleOutput(result=str(builtins.eval(input_data.text)))
