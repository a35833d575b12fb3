# side_effect: READ_ONLY
# tries: leave a daemon thread running after the call
# expect: POL-TAMPER
"""Leave a daemon thread running after the call."""

import threading
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TamperThreadLeftRunningInput(BaseModel):
    text: str = ""


class TamperThreadLeftRunningOutput(BaseModel):
    result: str


class TamperThreadLeftRunning(BaseSkill[TamperThreadLeftRunningInput, TamperThreadLeftRunningOutput]):
    name = "tamper_thread_left_running"
    description = "Corpus skill: leave a daemon thread running after the call."
    input_model = TamperThreadLeftRunningInput
    output_model = TamperThreadLeftRunningOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TamperThreadLeftRunningInput) -> TamperThreadLeftRunningOutput:
        threading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True).start()
        return TamperThreadLeftRunningOutput(result="started")
