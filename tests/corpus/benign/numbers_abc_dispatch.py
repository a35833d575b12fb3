# side_effect: READ_ONLY
# tricky: numbers.Integral/Real/Complex isinstance checks and functools.singledispatch
# family: types
"""Classify JSON values into integer, real, text and other kinds."""

import functools
import numbers
from typing import Any
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


@functools.singledispatch
def _describe(value: Any) -> str:
    return "other"


@_describe.register
def _(value: str) -> str:
    return "text"


class NumbersAbcDispatchInput(BaseModel):
    values: list[Any]


class NumbersAbcDispatchOutput(BaseModel):
    kinds: list[str]


class NumbersAbcDispatch(BaseSkill[NumbersAbcDispatchInput, NumbersAbcDispatchOutput]):
    name = "numbers_abc_dispatch"
    description = "Classify JSON values into integer, real, text and other kinds."
    input_model = NumbersAbcDispatchInput
    output_model = NumbersAbcDispatchOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: NumbersAbcDispatchInput) -> NumbersAbcDispatchOutput:
        kinds = []
        for value in input_data.values:
            if isinstance(value, bool):
                kinds.append("boolean")
            elif isinstance(value, numbers.Integral):
                kinds.append("integer")
            elif isinstance(value, numbers.Real):
                kinds.append("real")
            else:
                kinds.append(_describe(value))
        return NumbersAbcDispatchOutput(kinds=kinds)
