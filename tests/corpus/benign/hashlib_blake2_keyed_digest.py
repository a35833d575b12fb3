# side_effect: READ_ONLY
# tricky: keyed blake2b digests and pbkdf2_hmac key derivation from hashlib
# family: macs
"""Derive a key from a passphrase and compute keyed BLAKE2b digests of items."""

import hashlib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HashlibBlake2KeyedDigestInput(BaseModel):
    passphrase: str
    salt: str
    items: list[str]


class HashlibBlake2KeyedDigestOutput(BaseModel):
    derived_key_hex: str
    digests: dict[str, str]


class HashlibBlake2KeyedDigest(BaseSkill[HashlibBlake2KeyedDigestInput, HashlibBlake2KeyedDigestOutput]):
    name = "hashlib_blake2_keyed_digest"
    description = "Derive a key from a passphrase and compute keyed BLAKE2b digests of items."
    input_model = HashlibBlake2KeyedDigestInput
    output_model = HashlibBlake2KeyedDigestOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: HashlibBlake2KeyedDigestInput) -> HashlibBlake2KeyedDigestOutput:
        key = hashlib.pbkdf2_hmac("sha256", input_data.passphrase.encode(), input_data.salt.encode(), 10_000, dklen=32)
        digests = {item: hashlib.blake2b(item.encode(), key=key, digest_size=16).hexdigest() for item in input_data.items}
        return HashlibBlake2KeyedDigestOutput(derived_key_hex=key.hex(), digests=digests)
