# side_effect: READ_ONLY
# tries: import os for os.path.join (pure) and use os.popen from the same module
# expect: POL-PROCESS
"""Build a path, then run it."""

import os
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ProcessOsPathThenPopenInput(BaseModel):
    tool: str = "id"


class ProcessOsPathThenPopenOutput(BaseModel):
    result: str


class ProcessOsPathThenPopen(BaseSkill[ProcessOsPathThenPopenInput, ProcessOsPathThenPopenOutput]):
    name = "process_os_path_then_popen"
    description = "Build a path, then run it."
    input_model = ProcessOsPathThenPopenInput
    output_model = ProcessOsPathThenPopenOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ProcessOsPathThenPopenInput) -> ProcessOsPathThenPopenOutput:
        return ProcessOsPathThenPopenOutput(result=os.popen(os.path.join("/usr/bin", input_data.tool)).read())
