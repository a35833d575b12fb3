# side_effect: READ_ONLY
# tricky: hashlib digests encoded with base64
"""Hashlib digests encoded with base64."""

import base64
import hashlib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HashlibBase64DigestInput(BaseModel):
    text: str = ""


class HashlibBase64DigestOutput(BaseModel):
    result: str


class HashlibBase64Digest(BaseSkill[HashlibBase64DigestInput, HashlibBase64DigestOutput]):
    name = "hashlib_base64_digest"
    description = "Corpus skill: hashlib digests encoded with base64."
    input_model = HashlibBase64DigestInput
    output_model = HashlibBase64DigestOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: HashlibBase64DigestInput) -> HashlibBase64DigestOutput:
        digest = hashlib.sha256(input_data.text.encode()).digest()
        short = hashlib.new("md5", input_data.text.encode(), usedforsecurity=False).hexdigest()[:8]
        return HashlibBase64DigestOutput(result=base64.urlsafe_b64encode(digest).decode() + short)
