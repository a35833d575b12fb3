# side_effect: READ_ONLY
# tricky: tuple(range(...)) and a list comprehension of powers at module level
# family: module-tables
"""Format byte counts with binary prefixes."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


PREFIXES = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
THRESHOLDS = [1024 ** i for i in range(len(PREFIXES))]
LEVELS = tuple(range(len(PREFIXES) - 1, -1, -1))


class TableRangePowersInput(BaseModel):
    sizes: list[int]


class TableRangePowersOutput(BaseModel):
    formatted: list[str]


class TableRangePowers(BaseSkill[TableRangePowersInput, TableRangePowersOutput]):
    name = "table_range_powers"
    description = "Format byte counts with binary prefixes."
    input_model = TableRangePowersInput
    output_model = TableRangePowersOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableRangePowersInput) -> TableRangePowersOutput:
        out = []
        for size in input_data.sizes:
            level = next((i for i in LEVELS if size >= THRESHOLDS[i]), 0)
            value = size / THRESHOLDS[level]
            out.append(f"{value:.0f} {PREFIXES[level]}" if level == 0 else f"{value:.1f} {PREFIXES[level]}")
        return TableRangePowersOutput(formatted=out)
