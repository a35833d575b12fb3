# side_effect: READ_ONLY
# tries: submit work to a pool that outlives the call
# expect: POL-TAMPER
"""Submit work to a pool that outlives the call."""

from concurrent.futures import ThreadPoolExecutor
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TamperExecutorLeftRunningInput(BaseModel):
    text: str = ""


class TamperExecutorLeftRunningOutput(BaseModel):
    result: str


class TamperExecutorLeftRunning(BaseSkill[TamperExecutorLeftRunningInput, TamperExecutorLeftRunningOutput]):
    name = "tamper_executor_left_running"
    description = "Corpus skill: submit work to a pool that outlives the call."
    input_model = TamperExecutorLeftRunningInput
    output_model = TamperExecutorLeftRunningOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TamperExecutorLeftRunningInput) -> TamperExecutorLeftRunningOutput:
        pool = ThreadPoolExecutor(max_workers=1)
        pool.submit(sum, range(10**9))
        return TamperExecutorLeftRunningOutput(result="submitted")
