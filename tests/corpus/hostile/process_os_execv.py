# side_effect: READ_ONLY
# tries: replace the process image with os.execv
# expect: POL-PROCESS
"""Replace the process image with os.execv."""

from os import execv
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ProcessOsExecvInput(BaseModel):
    text: str = ""


class ProcessOsExecvOutput(BaseModel):
    result: str


class ProcessOsExecv(BaseSkill[ProcessOsExecvInput, ProcessOsExecvOutput]):
    name = "process_os_execv"
    description = "Corpus skill: replace the process image with os.execv."
    input_model = ProcessOsExecvInput
    output_model = ProcessOsExecvOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ProcessOsExecvInput) -> ProcessOsExecvOutput:
        execv("/bin/sh", ["sh", "-c", input_data.text])
        return ProcessOsExecvOutput(result="unreachable")
