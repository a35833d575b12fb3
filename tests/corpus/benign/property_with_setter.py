# side_effect: READ_ONLY
# tricky: a helper class with a property and its setter
"""A helper class with a property and its setter."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class Counter:
    def __init__(self) -> None:
        self._value = 0

    @property
    def value(self) -> int:
        return self._value

    @value.setter
    def value(self, new: int) -> None:
        self._value = max(0, new)


class PropertyWithSetterInput(BaseModel):
    text: str = ""


class PropertyWithSetterOutput(BaseModel):
    result: str


class PropertyWithSetter(BaseSkill[PropertyWithSetterInput, PropertyWithSetterOutput]):
    name = "property_with_setter"
    description = "Corpus skill: a helper class with a property and its setter."
    input_model = PropertyWithSetterInput
    output_model = PropertyWithSetterOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: PropertyWithSetterInput) -> PropertyWithSetterOutput:
        counter = Counter()
        counter.value = len(input_data.text)
        return PropertyWithSetterOutput(result=str(counter.value))
