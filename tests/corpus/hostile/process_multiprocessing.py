# side_effect: READ_ONLY
# tries: start a child process with multiprocessing
# expect: POL-PROCESS
"""Start a child process with multiprocessing."""

import multiprocessing as mp
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ProcessMultiprocessingInput(BaseModel):
    text: str = ""


class ProcessMultiprocessingOutput(BaseModel):
    result: str


class ProcessMultiprocessing(BaseSkill[ProcessMultiprocessingInput, ProcessMultiprocessingOutput]):
    name = "process_multiprocessing"
    description = "Corpus skill: start a child process with multiprocessing."
    input_model = ProcessMultiprocessingInput
    output_model = ProcessMultiprocessingOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ProcessMultiprocessingInput) -> ProcessMultiprocessingOutput:
        child = mp.Process(target=print, args=(input_data.text,))
        child.start()
        return ProcessMultiprocessingOutput(result=str(child.pid))
