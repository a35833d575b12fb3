# side_effect: READ_ONLY
# tricky: base64.urlsafe_b64decode and json.loads to read a token's claims (no verification)
# family: text-formats
"""Decode the header and claims of a JSON web token without verifying it."""

import base64
import binascii
import json
from typing import Any
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _segment(part: str) -> dict[str, Any]:
    padded = part + "=" * (-len(part) % 4)
    try:
        decoded = json.loads(base64.urlsafe_b64decode(padded))
    except (binascii.Error, ValueError) as err:
        raise ValueError(f"not a token segment: {err}") from err
    if not isinstance(decoded, dict):
        raise ValueError("a token segment must be a JSON object")
    return decoded


class Base64JwtClaimsInput(BaseModel):
    token: str


class Base64JwtClaimsOutput(BaseModel):
    header: dict[str, Any]
    claims: dict[str, Any]


class Base64JwtClaims(BaseSkill[Base64JwtClaimsInput, Base64JwtClaimsOutput]):
    name = "base64_jwt_claims"
    description = "Decode the header and claims of a JSON web token without verifying it."
    input_model = Base64JwtClaimsInput
    output_model = Base64JwtClaimsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: Base64JwtClaimsInput) -> Base64JwtClaimsOutput:
        parts = input_data.token.split(".")
        if len(parts) != 3:
            raise ValueError("a token has three dot-separated parts")
        return Base64JwtClaimsOutput(header=_segment(parts[0]), claims=_segment(parts[1]))
