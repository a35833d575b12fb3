# side_effect: READ_ONLY
# tricky: heapq.merge of sorted runs and heapq.nlargest with a key
# family: algorithms
"""Merge sorted lists and pick the k largest items by score."""

import heapq
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HeapqMergeTopkInput(BaseModel):
    runs: list[list[int]]
    scores: dict[str, float]
    k: int = 3


class HeapqMergeTopkOutput(BaseModel):
    merged: list[int]
    top: list[str]


class HeapqMergeTopk(BaseSkill[HeapqMergeTopkInput, HeapqMergeTopkOutput]):
    name = "heapq_merge_topk"
    description = "Merge sorted lists and pick the k largest items by score."
    input_model = HeapqMergeTopkInput
    output_model = HeapqMergeTopkOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: HeapqMergeTopkInput) -> HeapqMergeTopkOutput:
        merged = list(heapq.merge(*[sorted(r) for r in input_data.runs]))
        top = heapq.nlargest(max(0, input_data.k), input_data.scores, key=lambda name: input_data.scores[name])
        return HeapqMergeTopkOutput(merged=merged, top=top)
