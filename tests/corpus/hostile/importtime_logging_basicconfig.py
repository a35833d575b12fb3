# side_effect: READ_ONLY
# tries: configure logging to a file at import time, before any gate runs the skill
# expect: POL-IMPORT-TIME POL-FS POL-FS-WRITE POL-TAMPER POL-IMPORT
"""Configure a log file at import time."""

import logging
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


logging.basicConfig(filename="/tmp/kavi-import.log", level=logging.INFO)
logger = logging.getLogger(__name__)


class ImporttimeLoggingBasicconfigInput(BaseModel):
    text: str = ""


class ImporttimeLoggingBasicconfigOutput(BaseModel):
    result: str


class ImporttimeLoggingBasicconfig(BaseSkill[ImporttimeLoggingBasicconfigInput, ImporttimeLoggingBasicconfigOutput]):
    name = "importtime_logging_basicconfig"
    description = "Configure a log file at import time."
    input_model = ImporttimeLoggingBasicconfigInput
    output_model = ImporttimeLoggingBasicconfigOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeLoggingBasicconfigInput) -> ImporttimeLoggingBasicconfigOutput:
        logger.info("%s", input_data.text)
        return ImporttimeLoggingBasicconfigOutput(result=input_data.text)
