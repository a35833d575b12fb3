# side_effect: READ_ONLY
# tries: spawn a process with subprocess.run
# expect: POL-PROCESS
"""Spawn a process with subprocess.run."""

import subprocess
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ProcessSubprocessRunInput(BaseModel):
    text: str = ""


class ProcessSubprocessRunOutput(BaseModel):
    result: str


class ProcessSubprocessRun(BaseSkill[ProcessSubprocessRunInput, ProcessSubprocessRunOutput]):
    name = "process_subprocess_run"
    description = "Corpus skill: spawn a process with subprocess.run."
    input_model = ProcessSubprocessRunInput
    output_model = ProcessSubprocessRunOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ProcessSubprocessRunInput) -> ProcessSubprocessRunOutput:
        done = subprocess.run(["ls", "-la", "/"], capture_output=True, text=True, check=False)
        return ProcessSubprocessRunOutput(result=done.stdout)
