# side_effect: READ_ONLY
# tricky: type(value).__name__ and isinstance checks
"""Type(value).__name__ and isinstance checks."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TypeNameOfValueInput(BaseModel):
    text: str = ""


class TypeNameOfValueOutput(BaseModel):
    result: str


class TypeNameOfValue(BaseSkill[TypeNameOfValueInput, TypeNameOfValueOutput]):
    name = "type_name_of_value"
    description = "Corpus skill: type(value).__name__ and isinstance checks."
    input_model = TypeNameOfValueInput
    output_model = TypeNameOfValueOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TypeNameOfValueInput) -> TypeNameOfValueOutput:
        values: list[object] = [input_data.text, len(input_data.text), 1.5, None]
        names = [type(v).__name__ for v in values if not isinstance(v, bool)]
        return TypeNameOfValueOutput(result=",".join(names) + f" {self.name}")
