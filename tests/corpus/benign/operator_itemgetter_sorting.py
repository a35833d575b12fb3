# side_effect: READ_ONLY
# tricky: operator.itemgetter/attrgetter with literal names and methodcaller
# family: algorithms
"""Sort people by several keys and normalise their names."""

import operator
from dataclasses import dataclass
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


@dataclass(frozen=True)
class Person:
    name: str
    age: int
    city: str


class OperatorItemgetterSortingInput(BaseModel):
    people: list[dict[str, str | int]]


class OperatorItemgetterSortingOutput(BaseModel):
    ordered: list[str]
    cities: list[str]


class OperatorItemgetterSorting(BaseSkill[OperatorItemgetterSortingInput, OperatorItemgetterSortingOutput]):
    name = "operator_itemgetter_sorting"
    description = "Sort people by several keys and normalise their names."
    input_model = OperatorItemgetterSortingInput
    output_model = OperatorItemgetterSortingOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: OperatorItemgetterSortingInput) -> OperatorItemgetterSortingOutput:
        people = [Person(name=str(p["name"]), age=int(p["age"]), city=str(p["city"])) for p in input_data.people]
        ordered = sorted(people, key=operator.attrgetter("age", "city"))
        clean = list(map(operator.methodcaller("strip"), (p.name for p in ordered)))
        cities = sorted({operator.itemgetter("city")(p) for p in input_data.people}, key=str)
        return OperatorItemgetterSortingOutput(ordered=clean, cities=[str(c) for c in cities])
