# side_effect: READ_ONLY
# tricky: a module-level str.maketrans table built from string.ascii_lowercase slices
# family: text-formats
"""Encrypt or decrypt a text with a Caesar shift."""

import string
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase


class StringCaesarCipherInput(BaseModel):
    text: str
    shift: int = 13
    decrypt: bool = False


class StringCaesarCipherOutput(BaseModel):
    result: str


class StringCaesarCipher(BaseSkill[StringCaesarCipherInput, StringCaesarCipherOutput]):
    name = "string_caesar_cipher"
    description = "Encrypt or decrypt a text with a Caesar shift."
    input_model = StringCaesarCipherInput
    output_model = StringCaesarCipherOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: StringCaesarCipherInput) -> StringCaesarCipherOutput:
        k = (-input_data.shift if input_data.decrypt else input_data.shift) % 26
        table = str.maketrans(LOWER + UPPER, LOWER[k:] + LOWER[:k] + UPPER[k:] + UPPER[:k])
        return StringCaesarCipherOutput(result=input_data.text.translate(table))
