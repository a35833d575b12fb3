# side_effect: READ_ONLY
# tricky: time.perf_counter to stop a search when its time budget is spent
# family: timing
"""Find primes up to a limit, stopping early when a time budget runs out."""

import math
import time
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TimingPerfCounterBudgetInput(BaseModel):
    limit: int
    budget_ms: float = 100.0


class TimingPerfCounterBudgetOutput(BaseModel):
    primes_found: int
    largest: int | None
    complete: bool
    elapsed_ms: float


class TimingPerfCounterBudget(BaseSkill[TimingPerfCounterBudgetInput, TimingPerfCounterBudgetOutput]):
    name = "timing_perf_counter_budget"
    description = "Find primes up to a limit, stopping early when a time budget runs out."
    input_model = TimingPerfCounterBudgetInput
    output_model = TimingPerfCounterBudgetOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TimingPerfCounterBudgetInput) -> TimingPerfCounterBudgetOutput:
        start = time.perf_counter()
        deadline = start + input_data.budget_ms / 1000.0
        found: list[int] = []
        complete = True
        for n in range(2, max(2, input_data.limit) + 1):
            if n % 256 == 0 and time.perf_counter() > deadline:
                complete = False
                break
            if all(n % d for d in range(2, math.isqrt(n) + 1)):
                found.append(n)
        elapsed = (time.perf_counter() - start) * 1000.0
        return TimingPerfCounterBudgetOutput(primes_found=len(found), largest=found[-1] if found else None, complete=complete,
                   elapsed_ms=round(elapsed, 3))
