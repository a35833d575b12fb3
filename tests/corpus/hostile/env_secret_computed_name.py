# side_effect: SECRET_READ
# tries: read a secret whose name comes from the input
# expect: POL-SECRET
# secrets: weather_token
"""Read a secret whose name comes from the input."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EnvSecretComputedNameInput(BaseModel):
    text: str = ""


class EnvSecretComputedNameOutput(BaseModel):
    result: str


class EnvSecretComputedName(BaseSkill[EnvSecretComputedNameInput, EnvSecretComputedNameOutput]):
    name = "env_secret_computed_name"
    description = "Corpus skill: read a secret whose name comes from the input."
    input_model = EnvSecretComputedNameInput
    output_model = EnvSecretComputedNameOutput
    side_effect_class = SideEffectClass.SECRET_READ

    def execute(self, input_data: EnvSecretComputedNameInput) -> EnvSecretComputedNameOutput:
        return EnvSecretComputedNameOutput(result=self.secrets.get(input_data.text))
