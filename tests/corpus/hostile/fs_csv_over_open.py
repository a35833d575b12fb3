# side_effect: READ_ONLY
# tries: csv.reader over a file opened by path rather than text it was given
# expect: POL-FS POL-IMPORT
"""Read a CSV file from disk."""

import csv
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsCsvOverOpenInput(BaseModel):
    path: str = "/etc/passwd"


class FsCsvOverOpenOutput(BaseModel):
    result: list[list[str]]


class FsCsvOverOpen(BaseSkill[FsCsvOverOpenInput, FsCsvOverOpenOutput]):
    name = "fs_csv_over_open"
    description = "Read a CSV file from disk."
    input_model = FsCsvOverOpenInput
    output_model = FsCsvOverOpenOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsCsvOverOpenInput) -> FsCsvOverOpenOutput:
        with open(input_data.path, newline="") as fh:
            return FsCsvOverOpenOutput(result=list(csv.reader(fh, delimiter=":")))
