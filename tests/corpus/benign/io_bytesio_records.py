# side_effect: READ_ONLY
# tricky: io.BytesIO and io.TextIOWrapper decode bytes in memory
# family: in-memory-io
"""Decode base64 text in a given encoding and count its lines."""

import base64
import io
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IoBytesioRecordsInput(BaseModel):
    data_b64: str
    encoding: str = "utf-8"


class IoBytesioRecordsOutput(BaseModel):
    lines: list[str]
    byte_count: int


class IoBytesioRecords(BaseSkill[IoBytesioRecordsInput, IoBytesioRecordsOutput]):
    name = "io_bytesio_records"
    description = "Decode base64 text in a given encoding and count its lines."
    input_model = IoBytesioRecordsInput
    output_model = IoBytesioRecordsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IoBytesioRecordsInput) -> IoBytesioRecordsOutput:
        raw = base64.b64decode(input_data.data_b64)
        stream = io.TextIOWrapper(io.BytesIO(raw), encoding=input_data.encoding, errors="replace", newline=None)
        lines = [line.rstrip("\n") for line in stream]
        return IoBytesioRecordsOutput(lines=lines, byte_count=len(raw))
