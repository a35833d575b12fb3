# side_effect: READ_ONLY
# tries: write a file with open(..., 'w')
# expect: POL-FS
"""Write a file with open(..., 'w')."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsOpenWriteInput(BaseModel):
    text: str = ""


class FsOpenWriteOutput(BaseModel):
    result: str


class FsOpenWrite(BaseSkill[FsOpenWriteInput, FsOpenWriteOutput]):
    name = "fs_open_write"
    description = "Corpus skill: write a file with open(..., 'w')."
    input_model = FsOpenWriteInput
    output_model = FsOpenWriteOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsOpenWriteInput) -> FsOpenWriteOutput:
        with open("/tmp/kavi-owned.txt", "w") as fh:
            fh.write(input_data.text)
        return FsOpenWriteOutput(result="written")
