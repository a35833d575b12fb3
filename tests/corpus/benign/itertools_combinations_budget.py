# side_effect: READ_ONLY
# tricky: itertools.combinations with a bounded search and functools.reduce
# family: algorithms
"""Find the subset of item prices closest to a budget without going over."""

import functools
import itertools
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ItertoolsCombinationsBudgetInput(BaseModel):
    prices: dict[str, int]
    budget: int


class ItertoolsCombinationsBudgetOutput(BaseModel):
    items: list[str]
    spent: int


class ItertoolsCombinationsBudget(BaseSkill[ItertoolsCombinationsBudgetInput, ItertoolsCombinationsBudgetOutput]):
    name = "itertools_combinations_budget"
    description = "Find the subset of item prices closest to a budget without going over."
    input_model = ItertoolsCombinationsBudgetInput
    output_model = ItertoolsCombinationsBudgetOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ItertoolsCombinationsBudgetInput) -> ItertoolsCombinationsBudgetOutput:
        names = sorted(input_data.prices)[:16]
        best: tuple[int, tuple[str, ...]] = (0, ())
        for size in range(1, len(names) + 1):
            for combo in itertools.combinations(names, size):
                spent = functools.reduce(lambda acc, n: acc + input_data.prices[n], combo, 0)
                if best[0] < spent <= input_data.budget:
                    best = (spent, combo)
        return ItertoolsCombinationsBudgetOutput(items=list(best[1]), spent=best[0])
