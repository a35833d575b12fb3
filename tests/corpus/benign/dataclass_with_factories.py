# side_effect: READ_ONLY
# tricky: a frozen dataclass with field(default_factory=...)
"""A frozen dataclass with field(default_factory=...)."""

from dataclasses import dataclass, field
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


@dataclass(frozen=True)
class Tally:
    label: str
    items: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.label:
            raise ValueError("label required")


class DataclassWithFactoriesInput(BaseModel):
    text: str = ""


class DataclassWithFactoriesOutput(BaseModel):
    result: str


class DataclassWithFactories(BaseSkill[DataclassWithFactoriesInput, DataclassWithFactoriesOutput]):
    name = "dataclass_with_factories"
    description = "Corpus skill: a frozen dataclass with field(default_factory=...)."
    input_model = DataclassWithFactoriesInput
    output_model = DataclassWithFactoriesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DataclassWithFactoriesInput) -> DataclassWithFactoriesOutput:
        tally = Tally("words", input_data.text.split())
        return DataclassWithFactoriesOutput(result=f"{tally.label}={len(tally.items)}")
