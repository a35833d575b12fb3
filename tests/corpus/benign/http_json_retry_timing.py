# side_effect: NETWORK
# tricky: time.monotonic and a seeded random.Random for backoff jitter around the HTTP handle (no sleep)
# family: handles
"""Fetch JSON through the HTTP client, retrying failures within a time budget."""

import random
import time
from typing import Any
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HttpJsonRetryTimingInput(BaseModel):
    url: str
    attempts: int = 3
    budget_s: float = 10.0


class HttpJsonRetryTimingOutput(BaseModel):
    ok: bool
    attempts_made: int
    planned_backoff_s: list[float]
    data: Any = None


class HttpJsonRetryTiming(BaseSkill[HttpJsonRetryTimingInput, HttpJsonRetryTimingOutput]):
    name = "http_json_retry_timing"
    description = "Fetch JSON through the HTTP client, retrying failures within a time budget."
    input_model = HttpJsonRetryTimingInput
    output_model = HttpJsonRetryTimingOutput
    side_effect_class = SideEffectClass.NETWORK

    def execute(self, input_data: HttpJsonRetryTimingInput) -> HttpJsonRetryTimingOutput:
        rng = random.Random(len(input_data.url))
        deadline = time.monotonic() + input_data.budget_s
        backoff: list[float] = []
        last_error = ""
        for attempt in range(1, max(1, input_data.attempts) + 1):
            try:
                return HttpJsonRetryTimingOutput(ok=True, attempts_made=attempt, planned_backoff_s=backoff, data=self.http.get_json(input_data.url))
            except Exception as err:  # the handle raises its own errors; report the last one
                last_error = str(err)
                backoff.append(round(min(8.0, 0.5 * 2 ** attempt) * rng.uniform(0.5, 1.5), 3))
                if time.monotonic() >= deadline:
                    break
        return HttpJsonRetryTimingOutput(ok=False, attempts_made=len(backoff), planned_backoff_s=backoff, data=last_error)
