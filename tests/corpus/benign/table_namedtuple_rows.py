# side_effect: READ_ONLY
# tricky: collections.namedtuple rows in a module-level list, indexed by a comprehension
# family: module-tables
"""Find the chemical elements matching a symbol or a name prefix."""

from collections import namedtuple
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


Element = namedtuple("Element", "number symbol name mass")
ELEMENTS = [
    Element(1, "H", "hydrogen", 1.008),
    Element(2, "He", "helium", 4.0026),
    Element(3, "Li", "lithium", 6.94),
    Element(6, "C", "carbon", 12.011),
    Element(8, "O", "oxygen", 15.999),
]
BY_SYMBOL = {e.symbol.lower(): e for e in ELEMENTS}


class TableNamedtupleRowsInput(BaseModel):
    query: str


class TableNamedtupleRowsOutput(BaseModel):
    matches: list[dict[str, str | int | float]]


class TableNamedtupleRows(BaseSkill[TableNamedtupleRowsInput, TableNamedtupleRowsOutput]):
    name = "table_namedtuple_rows"
    description = "Find the chemical elements matching a symbol or a name prefix."
    input_model = TableNamedtupleRowsInput
    output_model = TableNamedtupleRowsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableNamedtupleRowsInput) -> TableNamedtupleRowsOutput:
        q = input_data.query.strip().lower()
        hits = [BY_SYMBOL[q]] if q in BY_SYMBOL else [e for e in ELEMENTS if e.name.startswith(q)]
        return TableNamedtupleRowsOutput(matches=[e._asdict() for e in hits])
