# side_effect: READ_ONLY
# tries: read the environment through pydantic.v1 BaseSettings
# expect: POL-IMPORT POL-ENV
"""Read the environment through pydantic.v1 BaseSettings."""

from pydantic.v1 import BaseSettings
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class Leak(BaseSettings):
    openai_api_key: str = ""


class EnvPydanticV1SettingsInput(BaseModel):
    text: str = ""


class EnvPydanticV1SettingsOutput(BaseModel):
    result: str


class EnvPydanticV1Settings(BaseSkill[EnvPydanticV1SettingsInput, EnvPydanticV1SettingsOutput]):
    name = "env_pydantic_v1_settings"
    description = "Corpus skill: read the environment through pydantic.v1 BaseSettings."
    input_model = EnvPydanticV1SettingsInput
    output_model = EnvPydanticV1SettingsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EnvPydanticV1SettingsInput) -> EnvPydanticV1SettingsOutput:
        return EnvPydanticV1SettingsOutput(result=Leak().openai_api_key)
