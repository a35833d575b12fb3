# side_effect: READ_ONLY
# tricky: array.array typecodes, byteswap and tobytes in memory (no tofile/fromfile)
# family: in-memory-io
"""Store integers in a compact typed array and report its byte form."""

import array
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ArrayTypedBufferInput(BaseModel):
    values: list[int]
    typecode: str = "i"
    big_endian: bool = False


class ArrayTypedBufferOutput(BaseModel):
    hex_bytes: str
    itemsize: int


class ArrayTypedBuffer(BaseSkill[ArrayTypedBufferInput, ArrayTypedBufferOutput]):
    name = "array_typed_buffer"
    description = "Store integers in a compact typed array and report its byte form."
    input_model = ArrayTypedBufferInput
    output_model = ArrayTypedBufferOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ArrayTypedBufferInput) -> ArrayTypedBufferOutput:
        if input_data.typecode not in array.typecodes or input_data.typecode in "fdu":
            raise ValueError(f"integer typecode expected, one of {array.typecodes}")
        try:
            arr = array.array(input_data.typecode, input_data.values)
        except OverflowError as err:
            raise ValueError(str(err)) from err
        if input_data.big_endian:
            arr.byteswap()
        return ArrayTypedBufferOutput(hex_bytes=arr.tobytes().hex(), itemsize=arr.itemsize)
