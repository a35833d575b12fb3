# side_effect: READ_ONLY
# tricky: contextlib.suppress and a @contextlib.contextmanager helper (no files involved)
# family: types
"""Parse numbers leniently and time sections with a context manager that records their names."""

import contextlib
from collections.abc import Iterator
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


@contextlib.contextmanager
def _section(log: list[str], name: str) -> Iterator[None]:
    log.append(f"start {name}")
    try:
        yield
    finally:
        log.append(f"end {name}")


class ContextlibSuppressParsingInput(BaseModel):
    values: list[str]


class ContextlibSuppressParsingOutput(BaseModel):
    numbers: list[float]
    log: list[str]


class ContextlibSuppressParsing(BaseSkill[ContextlibSuppressParsingInput, ContextlibSuppressParsingOutput]):
    name = "contextlib_suppress_parsing"
    description = "Parse numbers leniently and time sections with a context manager that records their names."
    input_model = ContextlibSuppressParsingInput
    output_model = ContextlibSuppressParsingOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ContextlibSuppressParsingInput) -> ContextlibSuppressParsingOutput:
        log: list[str] = []
        numbers: list[float] = []
        with _section(log, "parse"):
            for value in input_data.values:
                with contextlib.suppress(ValueError):
                    numbers.append(float(value))
        return ContextlibSuppressParsingOutput(numbers=numbers, log=log)
