# side_effect: SECRET_READ
# tricky: a SECRET_READ skill reading its one declared secret through the handle
# secrets: weather_token
"""A SECRET_READ skill reading its one declared secret through the handle."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DeclaredSecretReadInput(BaseModel):
    text: str = ""


class DeclaredSecretReadOutput(BaseModel):
    result: str


class DeclaredSecretRead(BaseSkill[DeclaredSecretReadInput, DeclaredSecretReadOutput]):
    name = "declared_secret_read"
    description = "Corpus skill: a SECRET_READ skill reading its one declared secret through the handle."
    input_model = DeclaredSecretReadInput
    output_model = DeclaredSecretReadOutput
    side_effect_class = SideEffectClass.SECRET_READ

    def execute(self, input_data: DeclaredSecretReadInput) -> DeclaredSecretReadOutput:
        token = self.secrets.get("weather_token")
        return DeclaredSecretReadOutput(result=f"token of length {len(token)} for {input_data.text}")
