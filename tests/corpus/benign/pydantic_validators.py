# side_effect: READ_ONLY
# tricky: pydantic field and model validators, Field constraints and ConfigDict
"""Pydantic field and model validators, Field constraints and ConfigDict."""

from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class PydanticValidatorsInput(BaseModel):
    model_config = ConfigDict(frozen=True, str_strip_whitespace=True)

    text: str = Field(default="", max_length=10_000)
    limit: int = Field(default=5, ge=1, le=100)

    @field_validator("text")
    @classmethod
    def no_tabs(cls, value: str) -> str:
        return value.replace("\t", " ")

    @model_validator(mode="after")
    def check(self) -> "PydanticValidatorsInput":
        if self.limit > 50 and not self.text:
            raise ValueError("a large limit needs text")
        return self


class PydanticValidatorsOutput(BaseModel):
    result: str


class PydanticValidators(BaseSkill[PydanticValidatorsInput, PydanticValidatorsOutput]):
    name = "pydantic_validators"
    description = "Corpus skill: pydantic field and model validators, Field constraints and ConfigDict."
    input_model = PydanticValidatorsInput
    output_model = PydanticValidatorsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: PydanticValidatorsInput) -> PydanticValidatorsOutput:
        return PydanticValidatorsOutput(result=input_data.text[: input_data.limit])
