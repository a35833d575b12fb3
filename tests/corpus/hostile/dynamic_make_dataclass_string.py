# side_effect: READ_ONLY
# tries: build a dataclass whose field type is a string pydantic will evaluate
# expect: POL-DYNAMIC-CODE
"""Build a dataclass whose field type is a string pydantic will evaluate."""

import dataclasses

from pydantic import TypeAdapter
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicMakeDataclassStringInput(BaseModel):
    text: str = ""


class DynamicMakeDataclassStringOutput(BaseModel):
    result: str


class DynamicMakeDataclassString(BaseSkill[DynamicMakeDataclassStringInput, DynamicMakeDataclassStringOutput]):
    name = "dynamic_make_dataclass_string"
    description = "Corpus skill: build a dataclass whose field type is a string pydantic will evaluate."
    input_model = DynamicMakeDataclassStringInput
    output_model = DynamicMakeDataclassStringOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicMakeDataclassStringInput) -> DynamicMakeDataclassStringOutput:
        klass = dataclasses.make_dataclass("Dyn", [("value", input_data.text)])
        return DynamicMakeDataclassStringOutput(result=repr(TypeAdapter(klass)))
