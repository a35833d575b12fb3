# side_effect: READ_ONLY
# tries: reach module globals through a function's __globals__
# expect: POL-INTROSPECTION
"""Reach module globals through a function's __globals__."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionFuncGlobalsInput(BaseModel):
    text: str = ""


class IntrospectionFuncGlobalsOutput(BaseModel):
    result: str


class IntrospectionFuncGlobals(BaseSkill[IntrospectionFuncGlobalsInput, IntrospectionFuncGlobalsOutput]):
    name = "introspection_func_globals"
    description = "Corpus skill: reach module globals through a function's __globals__."
    input_model = IntrospectionFuncGlobalsInput
    output_model = IntrospectionFuncGlobalsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionFuncGlobalsInput) -> IntrospectionFuncGlobalsOutput:
        found = BaseSkill.__init__.__globals__["SkillContext"]
        return IntrospectionFuncGlobalsOutput(result=repr(found))
