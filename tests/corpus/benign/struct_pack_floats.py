# side_effect: READ_ONLY
# tricky: struct.pack/iter_unpack round trip of floats
# family: text-formats
"""Pack numbers as 32-bit floats and show the precision lost in the round trip."""

import struct
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class StructPackFloatsInput(BaseModel):
    numbers: list[float]


class StructPackFloatsOutput(BaseModel):
    packed_hex: str
    round_trip: list[float]
    max_error: float


class StructPackFloats(BaseSkill[StructPackFloatsInput, StructPackFloatsOutput]):
    name = "struct_pack_floats"
    description = "Pack numbers as 32-bit floats and show the precision lost in the round trip."
    input_model = StructPackFloatsInput
    output_model = StructPackFloatsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: StructPackFloatsInput) -> StructPackFloatsOutput:
        packed = struct.pack(f"<{len(input_data.numbers)}f", *input_data.numbers)
        back = [v for (v,) in struct.iter_unpack("<f", packed)]
        errors = [abs(a - b) for a, b in zip(input_data.numbers, back, strict=True)]
        return StructPackFloatsOutput(packed_hex=packed.hex(), round_trip=back, max_error=max(errors, default=0.0))
