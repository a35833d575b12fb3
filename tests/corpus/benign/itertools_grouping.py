# side_effect: READ_ONLY
# tricky: itertools groupby, chain, islice and accumulate
"""Itertools groupby, chain, islice and accumulate."""

import itertools
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ItertoolsGroupingInput(BaseModel):
    text: str = ""


class ItertoolsGroupingOutput(BaseModel):
    result: str


class ItertoolsGrouping(BaseSkill[ItertoolsGroupingInput, ItertoolsGroupingOutput]):
    name = "itertools_grouping"
    description = "Corpus skill: itertools groupby, chain, islice and accumulate."
    input_model = ItertoolsGroupingInput
    output_model = ItertoolsGroupingOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ItertoolsGroupingInput) -> ItertoolsGroupingOutput:
        words = sorted(input_data.text.split(), key=len)
        groups = {k: list(g) for k, g in itertools.groupby(words, key=len)}
        running = list(itertools.accumulate(len(w) for w in words))
        firsts = list(itertools.islice(itertools.chain.from_iterable(groups.values()), 3))
        return ItertoolsGroupingOutput(result=f"{sorted(groups)} {running[-1:] or [0]} {firsts}")
