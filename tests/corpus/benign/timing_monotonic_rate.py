# side_effect: READ_ONLY
# tricky: time.monotonic and time.strftime/gmtime to format epoch seconds
# family: timing
"""Format epoch timestamps as UTC text and measure how long the formatting took."""

import time
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TimingMonotonicRateInput(BaseModel):
    timestamps: list[float]
    pattern: str = "%Y-%m-%dT%H:%M:%SZ"


class TimingMonotonicRateOutput(BaseModel):
    formatted: list[str]
    took_s: float


class TimingMonotonicRate(BaseSkill[TimingMonotonicRateInput, TimingMonotonicRateOutput]):
    name = "timing_monotonic_rate"
    description = "Format epoch timestamps as UTC text and measure how long the formatting took."
    input_model = TimingMonotonicRateInput
    output_model = TimingMonotonicRateOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TimingMonotonicRateInput) -> TimingMonotonicRateOutput:
        started = time.monotonic()
        formatted = [time.strftime(input_data.pattern, time.gmtime(ts)) for ts in input_data.timestamps]
        return TimingMonotonicRateOutput(formatted=formatted, took_s=max(0.0, time.monotonic() - started))
