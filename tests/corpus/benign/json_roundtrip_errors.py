# side_effect: READ_ONLY
# tricky: json parsing with JSONDecodeError handling
"""Json parsing with JSONDecodeError handling."""

import json
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class JsonRoundtripErrorsInput(BaseModel):
    text: str = ""


class JsonRoundtripErrorsOutput(BaseModel):
    result: str


class JsonRoundtripErrors(BaseSkill[JsonRoundtripErrorsInput, JsonRoundtripErrorsOutput]):
    name = "json_roundtrip_errors"
    description = "Corpus skill: json parsing with JSONDecodeError handling."
    input_model = JsonRoundtripErrorsInput
    output_model = JsonRoundtripErrorsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: JsonRoundtripErrorsInput) -> JsonRoundtripErrorsOutput:
        try:
            data = json.loads(input_data.text)
        except json.JSONDecodeError as err:
            return JsonRoundtripErrorsOutput(result=f"invalid json at {err.pos}")
        return JsonRoundtripErrorsOutput(result=json.dumps(data, sort_keys=True, indent=2))
