# side_effect: READ_ONLY
# tricky: random.Random(seed) gives reproducible shuffles and samples
# family: seeded-random
"""Shuffle a list reproducibly from a seed and draw a sample."""

import random
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class RandomSeededShuffleInput(BaseModel):
    items: list[str]
    seed: int
    sample_size: int = 1


class RandomSeededShuffleOutput(BaseModel):
    shuffled: list[str]
    sample: list[str]


class RandomSeededShuffle(BaseSkill[RandomSeededShuffleInput, RandomSeededShuffleOutput]):
    name = "random_seeded_shuffle"
    description = "Shuffle a list reproducibly from a seed and draw a sample."
    input_model = RandomSeededShuffleInput
    output_model = RandomSeededShuffleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: RandomSeededShuffleInput) -> RandomSeededShuffleOutput:
        rng = random.Random(input_data.seed)
        shuffled = list(input_data.items)
        rng.shuffle(shuffled)
        k = min(max(0, input_data.sample_size), len(shuffled))
        return RandomSeededShuffleOutput(shuffled=shuffled, sample=rng.sample(input_data.items, k))
