# side_effect: READ_ONLY
# tricky: enum.IntEnum with enum.unique and a lookup by name in execute
# family: types
"""Sort tickets by priority name and count them per priority."""

import enum
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


@enum.unique
class Priority(enum.IntEnum):
    LOW = 1
    NORMAL = 2
    HIGH = 3
    URGENT = 4


class EnumIntenumPriorityInput(BaseModel):
    tickets: dict[str, str]


class EnumIntenumPriorityOutput(BaseModel):
    order: list[str]
    per_priority: dict[str, int]


class EnumIntenumPriority(BaseSkill[EnumIntenumPriorityInput, EnumIntenumPriorityOutput]):
    name = "enum_intenum_priority"
    description = "Sort tickets by priority name and count them per priority."
    input_model = EnumIntenumPriorityInput
    output_model = EnumIntenumPriorityOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EnumIntenumPriorityInput) -> EnumIntenumPriorityOutput:
        parsed = {t: Priority[p.upper()] for t, p in input_data.tickets.items()}
        order = sorted(parsed, key=lambda t: (-parsed[t], t))
        per = {p.name.lower(): sum(1 for v in parsed.values() if v is p) for p in Priority}
        return EnumIntenumPriorityOutput(order=order, per_priority={k: v for k, v in per.items() if v})
