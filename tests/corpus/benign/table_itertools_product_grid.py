# side_effect: READ_ONLY
# tricky: list(itertools.product(...)) and a frozenset of chess squares built at module level
# family: module-tables
"""List the squares a knight can reach from a square on a chess board."""

import itertools
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


FILES = "abcdefgh"
RANKS = "12345678"
SQUARES = frozenset(f + r for f, r in itertools.product(FILES, RANKS))
KNIGHT_MOVES = [(dx, dy) for dx, dy in itertools.product((-2, -1, 1, 2), repeat=2) if abs(dx) != abs(dy)]


class TableItertoolsProductGridInput(BaseModel):
    square: str


class TableItertoolsProductGridOutput(BaseModel):
    reachable: list[str]


class TableItertoolsProductGrid(BaseSkill[TableItertoolsProductGridInput, TableItertoolsProductGridOutput]):
    name = "table_itertools_product_grid"
    description = "List the squares a knight can reach from a square on a chess board."
    input_model = TableItertoolsProductGridInput
    output_model = TableItertoolsProductGridOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableItertoolsProductGridInput) -> TableItertoolsProductGridOutput:
        sq = input_data.square.lower()
        if sq not in SQUARES:
            raise ValueError(f"{input_data.square!r} is not a square")
        f, r = FILES.index(sq[0]), RANKS.index(sq[1])
        reach = [FILES[f + dx] + RANKS[r + dy] for dx, dy in KNIGHT_MOVES if 0 <= f + dx < 8 and 0 <= r + dy < 8]
        return TableItertoolsProductGridOutput(reachable=sorted(reach))
