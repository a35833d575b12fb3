# side_effect: READ_ONLY
# tricky: hmac.new with hashlib.sha256 and hmac.compare_digest, key from the input
# family: macs
"""Sign a payload with HMAC-SHA256 and optionally check a given signature."""

import hashlib
import hmac
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HmacSignPayloadInput(BaseModel):
    key: str
    payload: str
    signature: str | None = None


class HmacSignPayloadOutput(BaseModel):
    signature: str
    valid: bool | None


class HmacSignPayload(BaseSkill[HmacSignPayloadInput, HmacSignPayloadOutput]):
    name = "hmac_sign_payload"
    description = "Sign a payload with HMAC-SHA256 and optionally check a given signature."
    input_model = HmacSignPayloadInput
    output_model = HmacSignPayloadOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: HmacSignPayloadInput) -> HmacSignPayloadOutput:
        mac = hmac.new(input_data.key.encode(), input_data.payload.encode(), hashlib.sha256).hexdigest()
        valid = None if input_data.signature is None else hmac.compare_digest(mac, input_data.signature.lower())
        return HmacSignPayloadOutput(signature=mac, valid=valid)
