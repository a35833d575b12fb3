# side_effect: READ_ONLY
# tries: logging.config.fileConfig reads a file and evaluates its handler arguments
# expect: POL-FS POL-DYNAMIC-CODE POL-IMPORT
"""Load a logging configuration file."""

import logging.config
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsLoggingConfigFileconfigInput(BaseModel):
    path: str = "/tmp/logging.ini"


class FsLoggingConfigFileconfigOutput(BaseModel):
    result: str


class FsLoggingConfigFileconfig(BaseSkill[FsLoggingConfigFileconfigInput, FsLoggingConfigFileconfigOutput]):
    name = "fs_logging_config_fileconfig"
    description = "Load a logging configuration file."
    input_model = FsLoggingConfigFileconfigInput
    output_model = FsLoggingConfigFileconfigOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsLoggingConfigFileconfigInput) -> FsLoggingConfigFileconfigOutput:
        logging.config.fileConfig(input_data.path, disable_existing_loggers=True)
        return FsLoggingConfigFileconfigOutput(result="loaded")
