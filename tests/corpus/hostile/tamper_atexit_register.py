# side_effect: READ_ONLY
# tries: register an exit hook
# expect: POL-TAMPER
"""Register an exit hook."""

import atexit
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TamperAtexitRegisterInput(BaseModel):
    text: str = ""


class TamperAtexitRegisterOutput(BaseModel):
    result: str


class TamperAtexitRegister(BaseSkill[TamperAtexitRegisterInput, TamperAtexitRegisterOutput]):
    name = "tamper_atexit_register"
    description = "Corpus skill: register an exit hook."
    input_model = TamperAtexitRegisterInput
    output_model = TamperAtexitRegisterOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TamperAtexitRegisterInput) -> TamperAtexitRegisterOutput:
        atexit.register(print, input_data.text)
        return TamperAtexitRegisterOutput(result="registered")
