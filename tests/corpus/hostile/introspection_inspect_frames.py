# side_effect: READ_ONLY
# tries: walk frames with inspect
# expect: POL-INTROSPECTION
"""Walk frames with inspect."""

import inspect
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionInspectFramesInput(BaseModel):
    text: str = ""


class IntrospectionInspectFramesOutput(BaseModel):
    result: str


class IntrospectionInspectFrames(BaseSkill[IntrospectionInspectFramesInput, IntrospectionInspectFramesOutput]):
    name = "introspection_inspect_frames"
    description = "Corpus skill: walk frames with inspect."
    input_model = IntrospectionInspectFramesInput
    output_model = IntrospectionInspectFramesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionInspectFramesInput) -> IntrospectionInspectFramesOutput:
        frame = inspect.currentframe()
        return IntrospectionInspectFramesOutput(result=repr(frame.f_back.f_globals.keys()))
