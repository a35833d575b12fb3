# side_effect: READ_ONLY
# tricky: statistics.quantiles, pstdev, mode and NormalDist
# family: numbers
"""Describe a sample: mean, spread, quartiles and a z-score per value."""

import statistics
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class StatisticsSummaryInput(BaseModel):
    values: list[float]


class StatisticsSummaryOutput(BaseModel):
    mean: float
    stdev: float
    quartiles: list[float]
    mode: float
    z_scores: list[float]


class StatisticsSummary(BaseSkill[StatisticsSummaryInput, StatisticsSummaryOutput]):
    name = "statistics_summary"
    description = "Describe a sample: mean, spread, quartiles and a z-score per value."
    input_model = StatisticsSummaryInput
    output_model = StatisticsSummaryOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: StatisticsSummaryInput) -> StatisticsSummaryOutput:
        if len(input_data.values) < 2:
            raise ValueError("need at least two values")
        mean = statistics.fmean(input_data.values)
        stdev = statistics.pstdev(input_data.values)
        dist = statistics.NormalDist(mean, stdev or 1.0)
        return StatisticsSummaryOutput(mean=mean, stdev=stdev, quartiles=statistics.quantiles(input_data.values, n=4),
                   mode=statistics.mode(input_data.values), z_scores=[round(dist.zscore(v), 4) for v in input_data.values])
