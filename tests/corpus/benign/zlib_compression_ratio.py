# side_effect: READ_ONLY
# tricky: zlib.compress/decompress and zlib.adler32 in memory
# family: text-formats
"""Measure how well a text compresses at a given zlib level."""

import base64
import zlib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ZlibCompressionRatioInput(BaseModel):
    text: str
    level: int = 6


class ZlibCompressionRatioOutput(BaseModel):
    original_bytes: int
    compressed_bytes: int
    ratio: float
    adler32: int
    payload_b64: str


class ZlibCompressionRatio(BaseSkill[ZlibCompressionRatioInput, ZlibCompressionRatioOutput]):
    name = "zlib_compression_ratio"
    description = "Measure how well a text compresses at a given zlib level."
    input_model = ZlibCompressionRatioInput
    output_model = ZlibCompressionRatioOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ZlibCompressionRatioInput) -> ZlibCompressionRatioOutput:
        data = input_data.text.encode("utf-8")
        compressed = zlib.compress(data, level=min(9, max(0, input_data.level)))
        if zlib.decompress(compressed) != data:
            raise ValueError("round trip failed")
        ratio = len(compressed) / len(data) if data else 1.0
        return ZlibCompressionRatioOutput(original_bytes=len(data), compressed_bytes=len(compressed), ratio=round(ratio, 4),
                   adler32=zlib.adler32(data), payload_b64=base64.b64encode(compressed).decode("ascii"))
