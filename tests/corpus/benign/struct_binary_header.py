# side_effect: READ_ONLY
# tricky: struct.unpack_from on bytes decoded from hex input
# family: text-formats
"""Decode a little-endian record header given as hex."""

import struct
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


HEADER = struct.Struct("<4sHHI")


class StructBinaryHeaderInput(BaseModel):
    hex_data: str


class StructBinaryHeaderOutput(BaseModel):
    magic: str
    major: int
    minor: int
    length: int


class StructBinaryHeader(BaseSkill[StructBinaryHeaderInput, StructBinaryHeaderOutput]):
    name = "struct_binary_header"
    description = "Decode a little-endian record header given as hex."
    input_model = StructBinaryHeaderInput
    output_model = StructBinaryHeaderOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: StructBinaryHeaderInput) -> StructBinaryHeaderOutput:
        try:
            data = bytes.fromhex(input_data.hex_data)
        except ValueError as err:
            raise ValueError(f"not hex: {err}") from err
        if len(data) < HEADER.size:
            raise ValueError(f"need at least {HEADER.size} bytes, got {len(data)}")
        magic, major, minor, length = HEADER.unpack_from(data)
        return StructBinaryHeaderOutput(magic=magic.decode("ascii", "replace"), major=major, minor=minor, length=length)
