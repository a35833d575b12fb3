# side_effect: READ_ONLY
# tries: a module logger that gets a FileHandler at import time
# expect: POL-IMPORT-TIME POL-FS POL-FS-WRITE POL-IMPORT
"""Add a file handler to the module logger at import time."""

import logging
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


logger = logging.getLogger(__name__)
logger.addHandler(logging.FileHandler("/tmp/kavi-module.log"))


class ImporttimeLoggerFileHandlerInput(BaseModel):
    text: str = ""


class ImporttimeLoggerFileHandlerOutput(BaseModel):
    result: str


class ImporttimeLoggerFileHandler(BaseSkill[ImporttimeLoggerFileHandlerInput, ImporttimeLoggerFileHandlerOutput]):
    name = "importtime_logger_file_handler"
    description = "Add a file handler to the module logger at import time."
    input_model = ImporttimeLoggerFileHandlerInput
    output_model = ImporttimeLoggerFileHandlerOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeLoggerFileHandlerInput) -> ImporttimeLoggerFileHandlerOutput:
        logger.warning("%s", input_data.text)
        return ImporttimeLoggerFileHandlerOutput(result=input_data.text)
