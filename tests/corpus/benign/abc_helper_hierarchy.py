# side_effect: READ_ONLY
# tricky: an abstract helper hierarchy with staticmethod and classmethod
"""An abstract helper hierarchy with staticmethod and classmethod."""

from abc import ABC, abstractmethod
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class Scorer(ABC):
    @abstractmethod
    def score(self, text: str) -> int: ...

    @staticmethod
    def clamp(n: int) -> int:
        return max(0, min(n, 100))

    @classmethod
    def create(cls) -> "Scorer":
        return LengthScorer()


class LengthScorer(Scorer):
    def score(self, text: str) -> int:
        return self.clamp(len(text))


class AbcHelperHierarchyInput(BaseModel):
    text: str = ""


class AbcHelperHierarchyOutput(BaseModel):
    result: str


class AbcHelperHierarchy(BaseSkill[AbcHelperHierarchyInput, AbcHelperHierarchyOutput]):
    name = "abc_helper_hierarchy"
    description = "Corpus skill: an abstract helper hierarchy with staticmethod and classmethod."
    input_model = AbcHelperHierarchyInput
    output_model = AbcHelperHierarchyOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: AbcHelperHierarchyInput) -> AbcHelperHierarchyOutput:
        return AbcHelperHierarchyOutput(result=str(Scorer.create().score(input_data.text)))
