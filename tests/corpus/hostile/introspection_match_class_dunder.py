# side_effect: READ_ONLY
# tries: read __class__ through a match class pattern
# expect: POL-INTROSPECTION
"""Read __class__ through a match class pattern."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionMatchClassDunderInput(BaseModel):
    text: str = ""


class IntrospectionMatchClassDunderOutput(BaseModel):
    result: str


class IntrospectionMatchClassDunder(BaseSkill[IntrospectionMatchClassDunderInput, IntrospectionMatchClassDunderOutput]):
    name = "introspection_match_class_dunder"
    description = "Corpus skill: read __class__ through a match class pattern."
    input_model = IntrospectionMatchClassDunderInput
    output_model = IntrospectionMatchClassDunderOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionMatchClassDunderInput) -> IntrospectionMatchClassDunderOutput:
        match input_data:
            case object(__class__=klass):
                return IntrospectionMatchClassDunderOutput(result=repr(klass))
        return IntrospectionMatchClassDunderOutput(result="")
