# side_effect: READ_ONLY
# tries: spawn an interactive shell with pty
# expect: POL-PROCESS
"""Spawn an interactive shell with pty."""

import pty
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ProcessPtySpawnInput(BaseModel):
    text: str = ""


class ProcessPtySpawnOutput(BaseModel):
    result: str


class ProcessPtySpawn(BaseSkill[ProcessPtySpawnInput, ProcessPtySpawnOutput]):
    name = "process_pty_spawn"
    description = "Corpus skill: spawn an interactive shell with pty."
    input_model = ProcessPtySpawnInput
    output_model = ProcessPtySpawnOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ProcessPtySpawnInput) -> ProcessPtySpawnOutput:
        pty.spawn("/bin/sh")
        return ProcessPtySpawnOutput(result="")
