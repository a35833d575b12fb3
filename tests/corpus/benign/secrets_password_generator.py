# side_effect: READ_ONLY
# tricky: the stdlib `secrets` module (token_hex, choice) shares its name with the secrets handle
# family: seeded-random
"""Generate random passwords and a hex token of the requested sizes."""

import secrets
import string
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


ALPHABET = string.ascii_letters + string.digits + "-_.!"


class SecretsPasswordGeneratorInput(BaseModel):
    length: int = 16
    count: int = 1


class SecretsPasswordGeneratorOutput(BaseModel):
    passwords: list[str]
    token: str


class SecretsPasswordGenerator(BaseSkill[SecretsPasswordGeneratorInput, SecretsPasswordGeneratorOutput]):
    name = "secrets_password_generator"
    description = "Generate random passwords and a hex token of the requested sizes."
    input_model = SecretsPasswordGeneratorInput
    output_model = SecretsPasswordGeneratorOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SecretsPasswordGeneratorInput) -> SecretsPasswordGeneratorOutput:
        length = min(max(8, input_data.length), 128)
        passwords = ["".join(secrets.choice(ALPHABET) for _ in range(length)) for _ in range(min(input_data.count, 20))]
        return SecretsPasswordGeneratorOutput(passwords=passwords, token=secrets.token_hex(16))
