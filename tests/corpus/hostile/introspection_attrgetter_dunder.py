# side_effect: READ_ONLY
# tries: walk dunders with operator.attrgetter
# expect: POL-ESCAPE POL-INTROSPECTION
"""Walk dunders with operator.attrgetter."""

from operator import attrgetter
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionAttrgetterDunderInput(BaseModel):
    text: str = ""


class IntrospectionAttrgetterDunderOutput(BaseModel):
    result: str


class IntrospectionAttrgetterDunder(BaseSkill[IntrospectionAttrgetterDunderInput, IntrospectionAttrgetterDunderOutput]):
    name = "introspection_attrgetter_dunder"
    description = "Corpus skill: walk dunders with operator.attrgetter."
    input_model = IntrospectionAttrgetterDunderInput
    output_model = IntrospectionAttrgetterDunderOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionAttrgetterDunderInput) -> IntrospectionAttrgetterDunderOutput:
        base = attrgetter("__class__.__base__")(())
        return IntrospectionAttrgetterDunderOutput(result=repr(base))
