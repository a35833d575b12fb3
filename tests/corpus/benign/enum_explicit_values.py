# side_effect: READ_ONLY
# tricky: an Enum with explicit values and @unique
"""An Enum with explicit values and @unique."""

from enum import Enum, unique
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


@unique
class Mode(str, Enum):
    UPPER = "upper"
    LOWER = "lower"
    TITLE = "title"


class EnumExplicitValuesInput(BaseModel):
    text: str = ""
    mode: Mode = Mode.UPPER


class EnumExplicitValuesOutput(BaseModel):
    result: str


class EnumExplicitValues(BaseSkill[EnumExplicitValuesInput, EnumExplicitValuesOutput]):
    name = "enum_explicit_values"
    description = "Corpus skill: an Enum with explicit values and @unique."
    input_model = EnumExplicitValuesInput
    output_model = EnumExplicitValuesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EnumExplicitValuesInput) -> EnumExplicitValuesOutput:
        if input_data.mode is Mode.UPPER:
            return EnumExplicitValuesOutput(result=input_data.text.upper())
        if input_data.mode is Mode.LOWER:
            return EnumExplicitValuesOutput(result=input_data.text.lower())
        return EnumExplicitValuesOutput(result=input_data.text.title())
