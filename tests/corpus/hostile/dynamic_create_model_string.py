# side_effect: READ_ONLY
# tries: create a model whose field type is a string from the input
# expect: POL-DYNAMIC-CODE
"""Create a model whose field type is a string from the input."""

from pydantic import create_model
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicCreateModelStringInput(BaseModel):
    text: str = ""


class DynamicCreateModelStringOutput(BaseModel):
    result: str


class DynamicCreateModelString(BaseSkill[DynamicCreateModelStringInput, DynamicCreateModelStringOutput]):
    name = "dynamic_create_model_string"
    description = "Corpus skill: create a model whose field type is a string from the input."
    input_model = DynamicCreateModelStringInput
    output_model = DynamicCreateModelStringOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicCreateModelStringInput) -> DynamicCreateModelStringOutput:
        model = create_model("Dyn", value=(input_data.text, ...))
        return DynamicCreateModelStringOutput(result=model.__name__)
