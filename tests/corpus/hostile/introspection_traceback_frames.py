# side_effect: READ_ONLY
# tries: walk from an exception's traceback to frame globals
# expect: POL-INTROSPECTION
"""Walk from an exception's traceback to frame globals."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionTracebackFramesInput(BaseModel):
    text: str = ""


class IntrospectionTracebackFramesOutput(BaseModel):
    result: str


class IntrospectionTracebackFrames(BaseSkill[IntrospectionTracebackFramesInput, IntrospectionTracebackFramesOutput]):
    name = "introspection_traceback_frames"
    description = "Corpus skill: walk from an exception's traceback to frame globals."
    input_model = IntrospectionTracebackFramesInput
    output_model = IntrospectionTracebackFramesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionTracebackFramesInput) -> IntrospectionTracebackFramesOutput:
        try:
            raise ValueError(input_data.text)
        except ValueError as err:
            frame = err.__traceback__.tb_frame
            return IntrospectionTracebackFramesOutput(result=repr(frame.f_globals))
