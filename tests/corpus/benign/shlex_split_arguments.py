# side_effect: READ_ONLY
# tricky: shlex.split and shlex.join parse shell syntax as text; nothing is run
# family: text-formats
"""Split a command line into arguments and re-quote it safely."""

import shlex
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ShlexSplitArgumentsInput(BaseModel):
    command_line: str


class ShlexSplitArgumentsOutput(BaseModel):
    program: str
    arguments: list[str]
    flags: list[str]
    quoted: str


class ShlexSplitArguments(BaseSkill[ShlexSplitArgumentsInput, ShlexSplitArgumentsOutput]):
    name = "shlex_split_arguments"
    description = "Split a command line into arguments and re-quote it safely."
    input_model = ShlexSplitArgumentsInput
    output_model = ShlexSplitArgumentsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ShlexSplitArgumentsInput) -> ShlexSplitArgumentsOutput:
        try:
            parts = shlex.split(input_data.command_line, posix=True)
        except ValueError as err:
            raise ValueError(f"unbalanced quoting: {err}") from err
        if not parts:
            raise ValueError("empty command line")
        return ShlexSplitArgumentsOutput(program=parts[0], arguments=parts[1:], flags=[p for p in parts[1:] if p.startswith("-")],
                   quoted=shlex.join(parts))
