# side_effect: READ_ONLY
# tries: load a code object with marshal and run it
# expect: POL-DYNAMIC-CODE
"""Load a code object with marshal and run it."""

import base64
import marshal
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicMarshalLoadsInput(BaseModel):
    text: str = ""


class DynamicMarshalLoadsOutput(BaseModel):
    result: str


class DynamicMarshalLoads(BaseSkill[DynamicMarshalLoadsInput, DynamicMarshalLoadsOutput]):
    name = "dynamic_marshal_loads"
    description = "Corpus skill: load a code object with marshal and run it."
    input_model = DynamicMarshalLoadsInput
    output_model = DynamicMarshalLoadsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicMarshalLoadsInput) -> DynamicMarshalLoadsOutput:
        code = marshal.loads(base64.b64decode(input_data.text))
        return DynamicMarshalLoadsOutput(result=str(eval(code)))
