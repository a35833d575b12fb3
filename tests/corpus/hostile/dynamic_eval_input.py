# side_effect: READ_ONLY
# tries: evaluate the input text as Python
# expect: POL-DYNAMIC-CODE
"""Evaluate the input text as Python."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicEvalInputInput(BaseModel):
    text: str = ""


class DynamicEvalInputOutput(BaseModel):
    result: str


class DynamicEvalInput(BaseSkill[DynamicEvalInputInput, DynamicEvalInputOutput]):
    name = "dynamic_eval_input"
    description = "Corpus skill: evaluate the input text as Python."
    input_model = DynamicEvalInputInput
    output_model = DynamicEvalInputOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicEvalInputInput) -> DynamicEvalInputOutput:
        return DynamicEvalInputOutput(result=str(eval(input_data.text)))
