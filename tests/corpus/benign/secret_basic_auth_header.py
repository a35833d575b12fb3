# side_effect: SECRET_READ
# tricky: base64 of two declared secrets to build an Authorization header value
# secrets: service_user service_token
# family: handles
"""Build a Basic authorization header from the declared user and token secrets."""

import base64
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class SecretBasicAuthHeaderInput(BaseModel):
    realm: str = "api"


class SecretBasicAuthHeaderOutput(BaseModel):
    header_name: str
    header_value_preview: str


class SecretBasicAuthHeader(BaseSkill[SecretBasicAuthHeaderInput, SecretBasicAuthHeaderOutput]):
    name = "secret_basic_auth_header"
    description = "Build a Basic authorization header from the declared user and token secrets."
    input_model = SecretBasicAuthHeaderInput
    output_model = SecretBasicAuthHeaderOutput
    side_effect_class = SideEffectClass.SECRET_READ

    def execute(self, input_data: SecretBasicAuthHeaderInput) -> SecretBasicAuthHeaderOutput:
        user = self.secrets.get("service_user")
        token = self.secrets.get("service_token")
        value = "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode("ascii")
        return SecretBasicAuthHeaderOutput(header_name="Authorization", header_value_preview=value[:10] + "..." + f" ({input_data.realm})")
