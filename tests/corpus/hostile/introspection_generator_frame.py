# side_effect: READ_ONLY
# tries: walk from a generator's frame to the caller without imports
# expect: POL-INTROSPECTION
"""Walk from a generator's frame to the caller without imports."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionGeneratorFrameInput(BaseModel):
    text: str = ""


class IntrospectionGeneratorFrameOutput(BaseModel):
    result: str


class IntrospectionGeneratorFrame(BaseSkill[IntrospectionGeneratorFrameInput, IntrospectionGeneratorFrameOutput]):
    name = "introspection_generator_frame"
    description = "Corpus skill: walk from a generator's frame to the caller without imports."
    input_model = IntrospectionGeneratorFrameInput
    output_model = IntrospectionGeneratorFrameOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionGeneratorFrameInput) -> IntrospectionGeneratorFrameOutput:
        gen = (ch for ch in input_data.text)
        outer = gen.gi_frame.f_back
        return IntrospectionGeneratorFrameOutput(result=repr(outer.f_globals if outer else None))
