# side_effect: READ_ONLY
# tricky: logger = logging.getLogger(__name__) at module level, logger.debug in execute
# family: module-logger
"""Count words per line, logging details at debug level."""

import logging
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


logger = logging.getLogger(__name__)


class LoggerModuleDebugInput(BaseModel):
    text: str


class LoggerModuleDebugOutput(BaseModel):
    words_per_line: list[int]
    total: int


class LoggerModuleDebug(BaseSkill[LoggerModuleDebugInput, LoggerModuleDebugOutput]):
    name = "logger_module_debug"
    description = "Count words per line, logging details at debug level."
    input_model = LoggerModuleDebugInput
    output_model = LoggerModuleDebugOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: LoggerModuleDebugInput) -> LoggerModuleDebugOutput:
        counts = [len(line.split()) for line in input_data.text.splitlines()]
        logger.debug("counted %d lines, %d words", len(counts), sum(counts))
        return LoggerModuleDebugOutput(words_per_line=counts, total=sum(counts))
