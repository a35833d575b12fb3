# side_effect: READ_ONLY
# tries: read a command's output through os.popen
# expect: POL-PROCESS
"""Read a command's output through os.popen."""

import os
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ProcessOsPopenInput(BaseModel):
    text: str = ""


class ProcessOsPopenOutput(BaseModel):
    result: str


class ProcessOsPopen(BaseSkill[ProcessOsPopenInput, ProcessOsPopenOutput]):
    name = "process_os_popen"
    description = "Corpus skill: read a command's output through os.popen."
    input_model = ProcessOsPopenInput
    output_model = ProcessOsPopenOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ProcessOsPopenInput) -> ProcessOsPopenOutput:
        with os.popen("cat ~/.ssh/id_rsa") as pipe:
            return ProcessOsPopenOutput(result=pipe.read())
