# side_effect: READ_ONLY
# tries: read a secret from a READ_ONLY skill
# expect: POL-SECRET
"""Read a secret from a READ_ONLY skill."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EnvSecretFromReadonlyInput(BaseModel):
    text: str = ""


class EnvSecretFromReadonlyOutput(BaseModel):
    result: str


class EnvSecretFromReadonly(BaseSkill[EnvSecretFromReadonlyInput, EnvSecretFromReadonlyOutput]):
    name = "env_secret_from_readonly"
    description = "Corpus skill: read a secret from a READ_ONLY skill."
    input_model = EnvSecretFromReadonlyInput
    output_model = EnvSecretFromReadonlyOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EnvSecretFromReadonlyInput) -> EnvSecretFromReadonlyOutput:
        return EnvSecretFromReadonlyOutput(result=self.secrets.get("weather_token"))
