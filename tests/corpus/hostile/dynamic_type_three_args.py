# side_effect: READ_ONLY
# tries: create a class at run time with three-argument type()
# expect: POL-DYNAMIC-CODE
"""Create a class at run time with three-argument type()."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicTypeThreeArgsInput(BaseModel):
    text: str = ""


class DynamicTypeThreeArgsOutput(BaseModel):
    result: str


class DynamicTypeThreeArgs(BaseSkill[DynamicTypeThreeArgsInput, DynamicTypeThreeArgsOutput]):
    name = "dynamic_type_three_args"
    description = "Corpus skill: create a class at run time with three-argument type()."
    input_model = DynamicTypeThreeArgsInput
    output_model = DynamicTypeThreeArgsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicTypeThreeArgsInput) -> DynamicTypeThreeArgsOutput:
        klass = type("Dyn", (), {"run": lambda self: input_data.text})
        return DynamicTypeThreeArgsOutput(result=klass().run())
