# side_effect: READ_ONLY
# tricky: Annotated metadata with Field and Literal string choices
"""Annotated metadata with Field and Literal string choices."""

from typing import Annotated, Literal

from pydantic import Field
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class AnnotatedLiteralFieldsInput(BaseModel):
    text: str = ""
    repeat: Annotated[int, Field(ge=1, le=5)] = 1
    style: Literal["plain text", "shout!", "__dunder__ is just a label"] = "plain text"


class AnnotatedLiteralFieldsOutput(BaseModel):
    result: str


class AnnotatedLiteralFields(BaseSkill[AnnotatedLiteralFieldsInput, AnnotatedLiteralFieldsOutput]):
    name = "annotated_literal_fields"
    description = "Corpus skill: Annotated metadata with Field and Literal string choices."
    input_model = AnnotatedLiteralFieldsInput
    output_model = AnnotatedLiteralFieldsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: AnnotatedLiteralFieldsInput) -> AnnotatedLiteralFieldsOutput:
        text = input_data.text.upper() if input_data.style == "shout!" else input_data.text
        return AnnotatedLiteralFieldsOutput(result=text * input_data.repeat)
