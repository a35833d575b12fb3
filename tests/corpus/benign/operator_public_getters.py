# side_effect: READ_ONLY
# tricky: operator.itemgetter and attrgetter with public literal names
"""Operator.itemgetter and attrgetter with public literal names."""

from dataclasses import dataclass
from operator import attrgetter, itemgetter
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


@dataclass
class Scored:
    word: str
    score: int


class OperatorPublicGettersInput(BaseModel):
    text: str = ""


class OperatorPublicGettersOutput(BaseModel):
    result: str


class OperatorPublicGetters(BaseSkill[OperatorPublicGettersInput, OperatorPublicGettersOutput]):
    name = "operator_public_getters"
    description = "Corpus skill: operator.itemgetter and attrgetter with public literal names."
    input_model = OperatorPublicGettersInput
    output_model = OperatorPublicGettersOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: OperatorPublicGettersInput) -> OperatorPublicGettersOutput:
        scored = [Scored(w, len(w)) for w in input_data.text.split()]
        best = sorted(scored, key=attrgetter("score"), reverse=True)[:3]
        pairs = sorted(((s.word, s.score) for s in best), key=itemgetter(1))
        return OperatorPublicGettersOutput(result=repr(pairs))
