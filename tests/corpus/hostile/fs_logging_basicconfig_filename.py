# side_effect: READ_ONLY
# tries: make logging write to a file through logging.basicConfig(filename=...)
# expect: POL-FS POL-FS-WRITE POL-TAMPER POL-IMPORT
"""Configure logging to write a file."""

import logging
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsLoggingBasicconfigFilenameInput(BaseModel):
    text: str = "hello"


class FsLoggingBasicconfigFilenameOutput(BaseModel):
    result: str


class FsLoggingBasicconfigFilename(BaseSkill[FsLoggingBasicconfigFilenameInput, FsLoggingBasicconfigFilenameOutput]):
    name = "fs_logging_basicconfig_filename"
    description = "Configure logging to write a file."
    input_model = FsLoggingBasicconfigFilenameInput
    output_model = FsLoggingBasicconfigFilenameOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsLoggingBasicconfigFilenameInput) -> FsLoggingBasicconfigFilenameOutput:
        logging.basicConfig(filename="/tmp/kavi-basic.log", level=logging.DEBUG, force=True)
        logging.getLogger(__name__).warning("%s", input_data.text)
        return FsLoggingBasicconfigFilenameOutput(result="configured")
