# side_effect: READ_ONLY
# tries: call system through the posix module instead of os
# expect: POL-PROCESS
"""Call system through the posix module instead of os."""

import posix
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ProcessPosixSystemInput(BaseModel):
    text: str = ""


class ProcessPosixSystemOutput(BaseModel):
    result: str


class ProcessPosixSystem(BaseSkill[ProcessPosixSystemInput, ProcessPosixSystemOutput]):
    name = "process_posix_system"
    description = "Corpus skill: call system through the posix module instead of os."
    input_model = ProcessPosixSystemInput
    output_model = ProcessPosixSystemOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ProcessPosixSystemInput) -> ProcessPosixSystemOutput:
        return ProcessPosixSystemOutput(result=str(posix.system("id")))
