# side_effect: READ_ONLY
# tries: build a format template at run time so the walk is not a literal
# expect: POL-ESCAPE POL-INTROSPECTION
"""Build a format template at run time so the walk is not a literal."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionFormatComputedInput(BaseModel):
    text: str = ""


class IntrospectionFormatComputedOutput(BaseModel):
    result: str


class IntrospectionFormatComputed(BaseSkill[IntrospectionFormatComputedInput, IntrospectionFormatComputedOutput]):
    name = "introspection_format_computed"
    description = "Corpus skill: build a format template at run time so the walk is not a literal."
    input_model = IntrospectionFormatComputedInput
    output_model = IntrospectionFormatComputedOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionFormatComputedInput) -> IntrospectionFormatComputedOutput:
        template = "{0." + "_" * 2 + "init" + "_" * 2 + "}"
        return IntrospectionFormatComputedOutput(result=template.format(self))
