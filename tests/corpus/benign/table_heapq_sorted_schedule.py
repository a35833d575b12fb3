# side_effect: READ_ONLY
# tricky: a module-level sorted() list of tuples and a dict built with enumerate
# family: module-tables
"""Assign jobs to the least-loaded of a fixed set of workers."""

import heapq
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


WORKERS = sorted(("ada", "bob", "cy"))
WORKER_INDEX = {name: i for i, name in enumerate(WORKERS)}


class TableHeapqSortedScheduleInput(BaseModel):
    jobs: dict[str, int]


class TableHeapqSortedScheduleOutput(BaseModel):
    assignment: dict[str, list[str]]
    loads: dict[str, int]


class TableHeapqSortedSchedule(BaseSkill[TableHeapqSortedScheduleInput, TableHeapqSortedScheduleOutput]):
    name = "table_heapq_sorted_schedule"
    description = "Assign jobs to the least-loaded of a fixed set of workers."
    input_model = TableHeapqSortedScheduleInput
    output_model = TableHeapqSortedScheduleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableHeapqSortedScheduleInput) -> TableHeapqSortedScheduleOutput:
        heap = [(0, WORKER_INDEX[w], w) for w in WORKERS]
        heapq.heapify(heap)
        assignment: dict[str, list[str]] = {w: [] for w in WORKERS}
        for job, cost in sorted(input_data.jobs.items(), key=lambda kv: (-kv[1], kv[0])):
            load, index, worker = heapq.heappop(heap)
            assignment[worker].append(job)
            heapq.heappush(heap, (load + cost, index, worker))
        return TableHeapqSortedScheduleOutput(assignment=assignment, loads={w: load for load, _, w in heap})
