# side_effect: READ_ONLY
# tricky: imports under if TYPE_CHECKING for annotations only
"""Imports under if TYPE_CHECKING for annotations only."""

from __future__ import annotations

from typing import TYPE_CHECKING
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


if TYPE_CHECKING:
    from collections.abc import Sequence


def first(items: Sequence[str]) -> str:
    return items[0] if items else ""


class TypeCheckingImportsInput(BaseModel):
    text: str = ""


class TypeCheckingImportsOutput(BaseModel):
    result: str


class TypeCheckingImports(BaseSkill[TypeCheckingImportsInput, TypeCheckingImportsOutput]):
    name = "type_checking_imports"
    description = "Corpus skill: imports under if TYPE_CHECKING for annotations only."
    input_model = TypeCheckingImportsInput
    output_model = TypeCheckingImportsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TypeCheckingImportsInput) -> TypeCheckingImportsOutput:
        return TypeCheckingImportsOutput(result=first(input_data.text.split()))
