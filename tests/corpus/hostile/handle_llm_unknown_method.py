# side_effect: READ_ONLY
# tries: call a method the model handle does not offer (anything beyond complete/embed is unchecked power)
# expect: POL-HANDLE
"""Call a method the model handle does not offer."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class AskInput(BaseModel):
    text: str


class AskOutput(BaseModel):
    text: str


class Ask(BaseSkill[AskInput, AskOutput]):
    name = "handle_llm_unknown_method"
    description = "Sends a raw request."
    input_model = AskInput
    output_model = AskOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: AskInput) -> AskOutput:
        return AskOutput(text=str(self.llm.raw_request(input_data.text)))
