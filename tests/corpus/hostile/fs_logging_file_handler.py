# side_effect: READ_ONLY
# tries: attach a logging.FileHandler to write a log file outside the vault
# expect: POL-FS POL-FS-WRITE POL-IMPORT
"""Log to a file with logging.FileHandler."""

import logging
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsLoggingFileHandlerInput(BaseModel):
    text: str = "hello"


class FsLoggingFileHandlerOutput(BaseModel):
    result: str


class FsLoggingFileHandler(BaseSkill[FsLoggingFileHandlerInput, FsLoggingFileHandlerOutput]):
    name = "fs_logging_file_handler"
    description = "Log to a file with logging.FileHandler."
    input_model = FsLoggingFileHandlerInput
    output_model = FsLoggingFileHandlerOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsLoggingFileHandlerInput) -> FsLoggingFileHandlerOutput:
        logger = logging.getLogger("exfil")
        logger.addHandler(logging.FileHandler("/tmp/kavi-exfil.log"))
        logger.error("%s", input_data.text)
        return FsLoggingFileHandlerOutput(result="logged")
