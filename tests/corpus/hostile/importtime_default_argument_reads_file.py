# side_effect: READ_ONLY
# tries: a default argument computed by reading a file, evaluated when the def runs at import time
# expect: POL-IMPORT-TIME POL-FS
"""Read a file as a default argument value."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _banner(text: str, motd: str = open("/etc/motd").read()) -> str:
    return motd + text


class ImporttimeDefaultArgumentReadsFileInput(BaseModel):
    text: str = ""


class ImporttimeDefaultArgumentReadsFileOutput(BaseModel):
    result: str


class ImporttimeDefaultArgumentReadsFile(BaseSkill[ImporttimeDefaultArgumentReadsFileInput, ImporttimeDefaultArgumentReadsFileOutput]):
    name = "importtime_default_argument_reads_file"
    description = "Read a file as a default argument value."
    input_model = ImporttimeDefaultArgumentReadsFileInput
    output_model = ImporttimeDefaultArgumentReadsFileOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeDefaultArgumentReadsFileInput) -> ImporttimeDefaultArgumentReadsFileOutput:
        return ImporttimeDefaultArgumentReadsFileOutput(result=_banner(input_data.text))
