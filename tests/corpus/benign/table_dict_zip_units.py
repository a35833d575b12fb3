# side_effect: READ_ONLY
# tricky: UNITS = dict(zip(NAMES, FACTORS)) at module level
# family: module-tables
"""Convert a length between metric and imperial units."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


NAMES = ("mm", "cm", "m", "km", "in", "ft", "yd", "mi")
FACTORS = (0.001, 0.01, 1.0, 1000.0, 0.0254, 0.3048, 0.9144, 1609.344)
UNITS = dict(zip(NAMES, FACTORS, strict=True))


class TableDictZipUnitsInput(BaseModel):
    value: float
    from_unit: str
    to_unit: str


class TableDictZipUnitsOutput(BaseModel):
    result: float


class TableDictZipUnits(BaseSkill[TableDictZipUnitsInput, TableDictZipUnitsOutput]):
    name = "table_dict_zip_units"
    description = "Convert a length between metric and imperial units."
    input_model = TableDictZipUnitsInput
    output_model = TableDictZipUnitsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableDictZipUnitsInput) -> TableDictZipUnitsOutput:
        try:
            metres = input_data.value * UNITS[input_data.from_unit]
            return TableDictZipUnitsOutput(result=round(metres / UNITS[input_data.to_unit], 9))
        except KeyError as err:
            raise ValueError(f"unknown unit {err.args[0]!r}; known: {', '.join(NAMES)}") from err
