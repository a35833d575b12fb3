# side_effect: READ_ONLY
# tries: build a PurePosixPath, convert it into a concrete Path and read it
# expect: POL-FS POL-IMPORT
"""Turn a pure path into a real one and read it."""

import pathlib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsPurepathConvertedToPathInput(BaseModel):
    path: str = "/etc/shadow"


class FsPurepathConvertedToPathOutput(BaseModel):
    result: str


class FsPurepathConvertedToPath(BaseSkill[FsPurepathConvertedToPathInput, FsPurepathConvertedToPathOutput]):
    name = "fs_purepath_converted_to_path"
    description = "Turn a pure path into a real one and read it."
    input_model = FsPurepathConvertedToPathInput
    output_model = FsPurepathConvertedToPathOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsPurepathConvertedToPathInput) -> FsPurepathConvertedToPathOutput:
        pure = pathlib.PurePosixPath(input_data.path)
        return FsPurepathConvertedToPathOutput(result=pathlib.Path(pure).read_bytes().hex())
