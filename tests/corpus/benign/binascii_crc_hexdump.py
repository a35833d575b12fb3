# side_effect: READ_ONLY
# tricky: binascii.hexlify/crc32 over bytes of the input string
# family: text-formats
"""Produce a hex dump and CRC-32 checksum of a text encoded as UTF-8."""

import binascii
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class BinasciiCrcHexdumpInput(BaseModel):
    text: str
    width: int = 16


class BinasciiCrcHexdumpOutput(BaseModel):
    crc32: str
    lines: list[str]


class BinasciiCrcHexdump(BaseSkill[BinasciiCrcHexdumpInput, BinasciiCrcHexdumpOutput]):
    name = "binascii_crc_hexdump"
    description = "Produce a hex dump and CRC-32 checksum of a text encoded as UTF-8."
    input_model = BinasciiCrcHexdumpInput
    output_model = BinasciiCrcHexdumpOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: BinasciiCrcHexdumpInput) -> BinasciiCrcHexdumpOutput:
        data = input_data.text.encode("utf-8")
        width = max(1, input_data.width)
        lines = []
        for offset in range(0, len(data), width):
            chunk = data[offset:offset + width]
            lines.append(f"{offset:08x}  {binascii.hexlify(chunk, ' ').decode()}")
        return BinasciiCrcHexdumpOutput(crc32=f"{binascii.crc32(data) & 0xFFFFFFFF:08x}", lines=lines)
