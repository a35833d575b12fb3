# side_effect: READ_ONLY
# tries: create files with tempfile
# expect: POL-FS
"""Create files with tempfile."""

import tempfile
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsTempfileInput(BaseModel):
    text: str = ""


class FsTempfileOutput(BaseModel):
    result: str


class FsTempfile(BaseSkill[FsTempfileInput, FsTempfileOutput]):
    name = "fs_tempfile"
    description = "Corpus skill: create files with tempfile."
    input_model = FsTempfileInput
    output_model = FsTempfileOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsTempfileInput) -> FsTempfileOutput:
        handle, path = tempfile.mkstemp()
        return FsTempfileOutput(result=path)
