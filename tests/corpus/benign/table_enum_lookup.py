# side_effect: READ_ONLY
# tricky: a module-level dict built by iterating an Enum, and dict.fromkeys for defaults
# family: module-tables
"""Parse HTTP-like status names and codes into a canonical form."""

import enum
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class Status(enum.Enum):
    OK = 200
    CREATED = 201
    NOT_FOUND = 404
    TEAPOT = 418


BY_TEXT = {**{m.name.lower(): m for m in Status}, **{str(m.value): m for m in Status}}
EMPTY_COUNTS = dict.fromkeys((m.name for m in Status), 0)


class TableEnumLookupInput(BaseModel):
    values: list[str]


class TableEnumLookupOutput(BaseModel):
    canonical: list[str | None]
    counts: dict[str, int]


class TableEnumLookup(BaseSkill[TableEnumLookupInput, TableEnumLookupOutput]):
    name = "table_enum_lookup"
    description = "Parse HTTP-like status names and codes into a canonical form."
    input_model = TableEnumLookupInput
    output_model = TableEnumLookupOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableEnumLookupInput) -> TableEnumLookupOutput:
        counts = dict(EMPTY_COUNTS)
        canonical: list[str | None] = []
        for value in input_data.values:
            member = BY_TEXT.get(value.strip().lower())
            canonical.append(member.name if member else None)
            if member:
                counts[member.name] += 1
        return TableEnumLookupOutput(canonical=canonical, counts=counts)
