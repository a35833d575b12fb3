# side_effect: READ_ONLY
# tricky: random.Random(seed).choices with weights and gauss for jitter
# family: seeded-random
"""Draw weighted choices reproducibly and simulate jittered delays."""

import random
from collections import Counter
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class RandomWeightedChoicesInput(BaseModel):
    options: dict[str, float]
    draws: int = 10
    seed: int = 0


class RandomWeightedChoicesOutput(BaseModel):
    picks: list[str]
    counts: dict[str, int]
    jitter_ms: list[float]


class RandomWeightedChoices(BaseSkill[RandomWeightedChoicesInput, RandomWeightedChoicesOutput]):
    name = "random_weighted_choices"
    description = "Draw weighted choices reproducibly and simulate jittered delays."
    input_model = RandomWeightedChoicesInput
    output_model = RandomWeightedChoicesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: RandomWeightedChoicesInput) -> RandomWeightedChoicesOutput:
        if not input_data.options or any(w < 0 for w in input_data.options.values()):
            raise ValueError("weights must be non-negative and at least one option given")
        rng = random.Random(input_data.seed)
        names = list(input_data.options)
        picks = rng.choices(names, weights=list(input_data.options.values()), k=max(0, min(input_data.draws, 1000)))
        jitter = [round(max(0.0, rng.gauss(100.0, 15.0)), 2) for _ in picks]
        return RandomWeightedChoicesOutput(picks=picks, counts=dict(Counter(picks)), jitter_ms=jitter)
