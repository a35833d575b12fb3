# side_effect: READ_ONLY
# tricky: gzip.compress/gzip.decompress on bytes (gzip.open would touch files)
# family: text-formats
"""Gzip a text into base64 or gunzip base64 back into text."""

import base64
import gzip
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class GzipBytesRoundtripInput(BaseModel):
    data: str
    inflate: bool = False


class GzipBytesRoundtripOutput(BaseModel):
    result: str


class GzipBytesRoundtrip(BaseSkill[GzipBytesRoundtripInput, GzipBytesRoundtripOutput]):
    name = "gzip_bytes_roundtrip"
    description = "Gzip a text into base64 or gunzip base64 back into text."
    input_model = GzipBytesRoundtripInput
    output_model = GzipBytesRoundtripOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: GzipBytesRoundtripInput) -> GzipBytesRoundtripOutput:
        if input_data.inflate:
            result = gzip.decompress(base64.b64decode(input_data.data)).decode("utf-8")
        else:
            result = base64.b64encode(gzip.compress(input_data.data.encode("utf-8"), mtime=0)).decode("ascii")
        return GzipBytesRoundtripOutput(result=result)
