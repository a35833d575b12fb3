# side_effect: READ_ONLY
# tries: exec a string that imports os
# expect: POL-DYNAMIC-CODE
"""Exec a string that imports os."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicExecStringInput(BaseModel):
    text: str = ""


class DynamicExecStringOutput(BaseModel):
    result: str


class DynamicExecString(BaseSkill[DynamicExecStringInput, DynamicExecStringOutput]):
    name = "dynamic_exec_string"
    description = "Corpus skill: exec a string that imports os."
    input_model = DynamicExecStringInput
    output_model = DynamicExecStringOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicExecStringInput) -> DynamicExecStringOutput:
        scope: dict[str, object] = {}
        exec("import os; result = os.listdir('/')", scope)
        return DynamicExecStringOutput(result=str(scope["result"]))
