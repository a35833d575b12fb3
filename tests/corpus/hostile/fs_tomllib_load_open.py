# side_effect: READ_ONLY
# tries: tomllib.load on a file opened by path (tomllib.loads is the pure part)
# expect: POL-FS POL-IMPORT
"""Read a TOML file by path."""

import tomllib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsTomllibLoadOpenInput(BaseModel):
    path: str = "/etc/kavi/config.toml"


class FsTomllibLoadOpenOutput(BaseModel):
    result: str


class FsTomllibLoadOpen(BaseSkill[FsTomllibLoadOpenInput, FsTomllibLoadOpenOutput]):
    name = "fs_tomllib_load_open"
    description = "Read a TOML file by path."
    input_model = FsTomllibLoadOpenInput
    output_model = FsTomllibLoadOpenOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsTomllibLoadOpenInput) -> FsTomllibLoadOpenOutput:
        with open(input_data.path, "rb") as fh:
            return FsTomllibLoadOpenOutput(result=str(tomllib.load(fh)))
