# side_effect: READ_ONLY
# tries: read another function's code object
# expect: POL-INTROSPECTION
"""Read another function's code object."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionCodeConstsInput(BaseModel):
    text: str = ""


class IntrospectionCodeConstsOutput(BaseModel):
    result: str


class IntrospectionCodeConsts(BaseSkill[IntrospectionCodeConstsInput, IntrospectionCodeConstsOutput]):
    name = "introspection_code_consts"
    description = "Corpus skill: read another function's code object."
    input_model = IntrospectionCodeConstsInput
    output_model = IntrospectionCodeConstsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionCodeConstsInput) -> IntrospectionCodeConstsOutput:
        return IntrospectionCodeConstsOutput(result=repr(self.execute.__code__.co_consts))
