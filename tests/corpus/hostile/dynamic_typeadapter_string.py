# side_effect: READ_ONLY
# tries: have pydantic evaluate a computed string as a type
# expect: POL-DYNAMIC-CODE
"""Have pydantic evaluate a computed string as a type."""

from pydantic import TypeAdapter
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicTypeadapterStringInput(BaseModel):
    text: str = ""


class DynamicTypeadapterStringOutput(BaseModel):
    result: str


class DynamicTypeadapterString(BaseSkill[DynamicTypeadapterStringInput, DynamicTypeadapterStringOutput]):
    name = "dynamic_typeadapter_string"
    description = "Corpus skill: have pydantic evaluate a computed string as a type."
    input_model = DynamicTypeadapterStringInput
    output_model = DynamicTypeadapterStringOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicTypeadapterStringInput) -> DynamicTypeadapterStringOutput:
        adapter = TypeAdapter("__imp" + "ort__('os').getpid() or str")
        return DynamicTypeadapterStringOutput(result=str(adapter.validate_python(input_data.text)))
