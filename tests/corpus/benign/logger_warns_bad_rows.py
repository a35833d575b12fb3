# side_effect: READ_ONLY
# tricky: a named module logger with warning/isEnabledFor, and logging level constants
# family: module-logger
"""Parse key=value lines, warning about malformed lines instead of failing."""

import logging
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


log = logging.getLogger("kavi.skills.key_value")


class LoggerWarnsBadRowsInput(BaseModel):
    lines: list[str]


class LoggerWarnsBadRowsOutput(BaseModel):
    values: dict[str, str]
    malformed: int


class LoggerWarnsBadRows(BaseSkill[LoggerWarnsBadRowsInput, LoggerWarnsBadRowsOutput]):
    name = "logger_warns_bad_rows"
    description = "Parse key=value lines, warning about malformed lines instead of failing."
    input_model = LoggerWarnsBadRowsInput
    output_model = LoggerWarnsBadRowsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: LoggerWarnsBadRowsInput) -> LoggerWarnsBadRowsOutput:
        values: dict[str, str] = {}
        malformed = 0
        for number, line in enumerate(input_data.lines, start=1):
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                malformed += 1
                log.warning("line %d is not key=value: %r", number, line)
                continue
            values[key.strip()] = value.strip()
        if log.isEnabledFor(logging.DEBUG):
            log.debug("parsed %d keys", len(values))
        return LoggerWarnsBadRowsOutput(values=values, malformed=malformed)
