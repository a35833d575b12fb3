# side_effect: READ_ONLY
# tricky: itertools.pairwise, accumulate, groupby, islice and chain.from_iterable
# family: algorithms
"""Compute running totals, day-to-day changes and runs of equal values."""

import itertools
import operator
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ItertoolsWindowsGroupsInput(BaseModel):
    values: list[int]


class ItertoolsWindowsGroupsOutput(BaseModel):
    running_total: list[int]
    changes: list[int]
    runs: list[list[int]]
    first_three: list[int]


class ItertoolsWindowsGroups(BaseSkill[ItertoolsWindowsGroupsInput, ItertoolsWindowsGroupsOutput]):
    name = "itertools_windows_groups"
    description = "Compute running totals, day-to-day changes and runs of equal values."
    input_model = ItertoolsWindowsGroupsInput
    output_model = ItertoolsWindowsGroupsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ItertoolsWindowsGroupsInput) -> ItertoolsWindowsGroupsOutput:
        running = list(itertools.accumulate(input_data.values, operator.add))
        changes = [b - a for a, b in itertools.pairwise(input_data.values)]
        runs = [[key, len(list(group))] for key, group in itertools.groupby(input_data.values)]
        flat = list(itertools.islice(itertools.chain.from_iterable([input_data.values, running]), 3))
        return ItertoolsWindowsGroupsOutput(running_total=running, changes=changes, runs=runs, first_three=flat)
