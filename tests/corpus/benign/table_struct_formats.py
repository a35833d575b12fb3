# side_effect: READ_ONLY
# tricky: a module-level dict of struct.Struct objects and their sizes
# family: module-tables
"""Decode a sequence of typed fields from hex bytes."""

import struct
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


FORMATS = {name: struct.Struct("<" + code) for name, code in
           (("u8", "B"), ("i16", "h"), ("u16", "H"), ("u32", "I"), ("i64", "q"), ("f32", "f"), ("f64", "d"))}
SIZES = {name: fmt.size for name, fmt in FORMATS.items()}


class TableStructFormatsInput(BaseModel):
    hex_data: str
    fields: list[str]


class TableStructFormatsOutput(BaseModel):
    values: list[float]


class TableStructFormats(BaseSkill[TableStructFormatsInput, TableStructFormatsOutput]):
    name = "table_struct_formats"
    description = "Decode a sequence of typed fields from hex bytes."
    input_model = TableStructFormatsInput
    output_model = TableStructFormatsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableStructFormatsInput) -> TableStructFormatsOutput:
        data = bytes.fromhex(input_data.hex_data)
        offset = 0
        values: list[float] = []
        for field in input_data.fields:
            if field not in FORMATS:
                raise ValueError(f"unknown field type {field!r}")
            if offset + SIZES[field] > len(data):
                raise ValueError("not enough bytes")
            (value,) = FORMATS[field].unpack_from(data, offset)
            values.append(value)
            offset += SIZES[field]
        return TableStructFormatsOutput(values=values)
