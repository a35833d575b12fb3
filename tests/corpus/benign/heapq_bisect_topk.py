# side_effect: READ_ONLY
# tricky: heapq and bisect over word lengths
"""Heapq and bisect over word lengths."""

import bisect
import heapq
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HeapqBisectTopkInput(BaseModel):
    text: str = ""


class HeapqBisectTopkOutput(BaseModel):
    result: str


class HeapqBisectTopk(BaseSkill[HeapqBisectTopkInput, HeapqBisectTopkOutput]):
    name = "heapq_bisect_topk"
    description = "Corpus skill: heapq and bisect over word lengths."
    input_model = HeapqBisectTopkInput
    output_model = HeapqBisectTopkOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: HeapqBisectTopkInput) -> HeapqBisectTopkOutput:
        lengths = sorted(len(w) for w in input_data.text.split())
        top = heapq.nlargest(3, lengths)
        pos = bisect.bisect_left(lengths, 5)
        return HeapqBisectTopkOutput(result=f"{top} {pos}")
