# side_effect: READ_ONLY
# tricky: TypeVar, Generic, Protocol and union annotations
"""TypeVar, Generic, Protocol and union annotations."""

from collections.abc import Callable, Iterable
from typing import Generic, Optional, Protocol, TypeVar, Union
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


T = TypeVar("T")


class Sized(Protocol):
    def __len__(self) -> int: ...


class Box(Generic[T]):
    def __init__(self, value: T) -> None:
        self.value = value

    def map(self, fn: Callable[[T], T]) -> "Box[T]":
        return Box(fn(self.value))


def longest(items: Iterable[str], default: Optional[str] = None) -> Union[str, None]:
    best: str | None = default
    for item in items:
        if best is None or len(item) > len(best):
            best = item
    return best


class TypingGenericsInput(BaseModel):
    text: str = ""


class TypingGenericsOutput(BaseModel):
    result: str


class TypingGenerics(BaseSkill[TypingGenericsInput, TypingGenericsOutput]):
    name = "typing_generics"
    description = "Corpus skill: TypeVar, Generic, Protocol and union annotations."
    input_model = TypingGenericsInput
    output_model = TypingGenericsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TypingGenericsInput) -> TypingGenericsOutput:
        box: Box[str] = Box(input_data.text).map(str.strip)
        return TypingGenericsOutput(result=longest(box.value.split(), default="") or "")
