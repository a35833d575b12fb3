# side_effect: READ_ONLY
# tries: reach codecs.open through the allowed json module
# expect: POL-FS POL-IMPORT
"""Reach codecs.open through the allowed json module."""

import json
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsJsonCodecsOpenInput(BaseModel):
    text: str = ""


class FsJsonCodecsOpenOutput(BaseModel):
    result: str


class FsJsonCodecsOpen(BaseSkill[FsJsonCodecsOpenInput, FsJsonCodecsOpenOutput]):
    name = "fs_json_codecs_open"
    description = "Corpus skill: reach codecs.open through the allowed json module."
    input_model = FsJsonCodecsOpenInput
    output_model = FsJsonCodecsOpenOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsJsonCodecsOpenInput) -> FsJsonCodecsOpenOutput:
        with json.codecs.open("/etc/hostname", encoding="utf-8") as fh:
            return FsJsonCodecsOpenOutput(result=fh.read())
