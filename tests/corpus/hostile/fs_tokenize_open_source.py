# side_effect: READ_ONLY
# tries: tokenize.open reads a source file by path (generate_tokens over a string is the pure part)
# expect: POL-FS POL-IMPORT
"""Read a source file with tokenize.open."""

import tokenize
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsTokenizeOpenSourceInput(BaseModel):
    path: str = "/etc/kavi/secrets.py"


class FsTokenizeOpenSourceOutput(BaseModel):
    result: str


class FsTokenizeOpenSource(BaseSkill[FsTokenizeOpenSourceInput, FsTokenizeOpenSourceOutput]):
    name = "fs_tokenize_open_source"
    description = "Read a source file with tokenize.open."
    input_model = FsTokenizeOpenSourceInput
    output_model = FsTokenizeOpenSourceOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsTokenizeOpenSourceInput) -> FsTokenizeOpenSourceOutput:
        with tokenize.open(input_data.path) as fh:
            return FsTokenizeOpenSourceOutput(result=fh.read())
