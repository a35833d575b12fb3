# side_effect: READ_ONLY
# tries: reach a module's __dict__
# expect: POL-INTROSPECTION
"""Reach a module's __dict__."""

import json
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionModuleDictInput(BaseModel):
    text: str = ""


class IntrospectionModuleDictOutput(BaseModel):
    result: str


class IntrospectionModuleDict(BaseSkill[IntrospectionModuleDictInput, IntrospectionModuleDictOutput]):
    name = "introspection_module_dict"
    description = "Corpus skill: reach a module's __dict__."
    input_model = IntrospectionModuleDictInput
    output_model = IntrospectionModuleDictOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionModuleDictInput) -> IntrospectionModuleDictOutput:
        hidden = json.__dict__["codecs"]
        return IntrospectionModuleDictOutput(result=repr(hidden))
