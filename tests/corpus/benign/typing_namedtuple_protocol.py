# side_effect: READ_ONLY
# tricky: typing.NamedTuple, Protocol, TypedDict, cast and Final
# family: types
"""Compute bounding boxes of shapes described by points."""

from typing import Final, NamedTuple, Protocol, TypedDict, cast
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


PADDING: Final = 0.0


class Box(NamedTuple):
    left: float
    bottom: float
    right: float
    top: float


class HasBox(Protocol):
    def box(self) -> Box: ...


class BoxDict(TypedDict):
    width: float
    height: float


class Shape:
    def __init__(self, points: list[tuple[float, float]]) -> None:
        self.points = points

    def box(self) -> Box:
        xs = [p[0] for p in self.points]
        ys = [p[1] for p in self.points]
        return Box(min(xs) - PADDING, min(ys) - PADDING, max(xs) + PADDING, max(ys) + PADDING)


def _size(shape: HasBox) -> BoxDict:
    b = shape.box()
    return cast(BoxDict, {"width": b.right - b.left, "height": b.top - b.bottom})


class TypingNamedtupleProtocolInput(BaseModel):
    shapes: dict[str, list[tuple[float, float]]]


class TypingNamedtupleProtocolOutput(BaseModel):
    sizes: dict[str, dict[str, float]]


class TypingNamedtupleProtocol(BaseSkill[TypingNamedtupleProtocolInput, TypingNamedtupleProtocolOutput]):
    name = "typing_namedtuple_protocol"
    description = "Compute bounding boxes of shapes described by points."
    input_model = TypingNamedtupleProtocolInput
    output_model = TypingNamedtupleProtocolOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TypingNamedtupleProtocolInput) -> TypingNamedtupleProtocolOutput:
        sizes = {name: dict(_size(Shape(points))) for name, points in input_data.shapes.items() if points}
        return TypingNamedtupleProtocolOutput(sizes=sizes)
