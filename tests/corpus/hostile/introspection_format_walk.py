# side_effect: READ_ONLY
# tries: walk attributes inside a str.format template
# expect: POL-INTROSPECTION
"""Walk attributes inside a str.format template."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionFormatWalkInput(BaseModel):
    text: str = ""


class IntrospectionFormatWalkOutput(BaseModel):
    result: str


class IntrospectionFormatWalk(BaseSkill[IntrospectionFormatWalkInput, IntrospectionFormatWalkOutput]):
    name = "introspection_format_walk"
    description = "Corpus skill: walk attributes inside a str.format template."
    input_model = IntrospectionFormatWalkInput
    output_model = IntrospectionFormatWalkOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionFormatWalkInput) -> IntrospectionFormatWalkOutput:
        return IntrospectionFormatWalkOutput(result="{0.__init__.__globals__}".format(self))
