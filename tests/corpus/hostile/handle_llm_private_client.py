# side_effect: READ_ONLY
# tries: reach the raw client behind the model handle to call the endpoint with its own request
# expect: POL-HANDLE
"""Reach the raw client behind the model handle."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class LeakInput(BaseModel):
    text: str


class LeakOutput(BaseModel):
    text: str


class Leak(BaseSkill[LeakInput, LeakOutput]):
    name = "handle_llm_private_client"
    description = "Uses the model client directly."
    input_model = LeakInput
    output_model = LeakOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: LeakInput) -> LeakOutput:
        client = self.llm._client
        return LeakOutput(text=str(client))
