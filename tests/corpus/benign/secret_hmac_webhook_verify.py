# side_effect: SECRET_READ
# tricky: hmac.compare_digest with a key read through the secrets handle
# secrets: webhook_key
# family: handles
"""Verify a webhook's HMAC-SHA256 signature with the declared signing key."""

import hashlib
import hmac
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class SecretHmacWebhookVerifyInput(BaseModel):
    body: str
    signature: str


class SecretHmacWebhookVerifyOutput(BaseModel):
    valid: bool


class SecretHmacWebhookVerify(BaseSkill[SecretHmacWebhookVerifyInput, SecretHmacWebhookVerifyOutput]):
    name = "secret_hmac_webhook_verify"
    description = "Verify a webhook's HMAC-SHA256 signature with the declared signing key."
    input_model = SecretHmacWebhookVerifyInput
    output_model = SecretHmacWebhookVerifyOutput
    side_effect_class = SideEffectClass.SECRET_READ

    def execute(self, input_data: SecretHmacWebhookVerifyInput) -> SecretHmacWebhookVerifyOutput:
        key = self.secrets.get("webhook_key").encode()
        expected = "sha256=" + hmac.new(key, input_data.body.encode(), hashlib.sha256).hexdigest()
        return SecretHmacWebhookVerifyOutput(valid=hmac.compare_digest(expected, input_data.signature.strip()))
