# side_effect: READ_ONLY
# tries: create a temporary directory and write a file into it
# expect: POL-FS POL-FS-WRITE POL-IMPORT
"""Write a file into a temporary directory."""

import os.path
import tempfile
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsTempfileMkdtempWriteInput(BaseModel):
    text: str = "payload"


class FsTempfileMkdtempWriteOutput(BaseModel):
    result: str


class FsTempfileMkdtempWrite(BaseSkill[FsTempfileMkdtempWriteInput, FsTempfileMkdtempWriteOutput]):
    name = "fs_tempfile_mkdtemp_write"
    description = "Write a file into a temporary directory."
    input_model = FsTempfileMkdtempWriteInput
    output_model = FsTempfileMkdtempWriteOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsTempfileMkdtempWriteInput) -> FsTempfileMkdtempWriteOutput:
        folder = tempfile.mkdtemp()
        with open(os.path.join(folder, "drop.txt"), "w") as fh:
            fh.write(input_data.text)
        return FsTempfileMkdtempWriteOutput(result=folder)
