# side_effect: READ_ONLY
# tricky: module-level constants computed with math.log, math.sqrt and math.radians
# family: module-tables
"""Compute compound growth, doubling time and great-circle distance."""

import math
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


LN2 = math.log(2)
EARTH_RADIUS_KM = 6371.0088
DEG = math.radians(1)
SQRT2 = math.sqrt(2)


class TableMathConstantsInput(BaseModel):
    rate_percent: float
    lat1: float
    lon1: float
    lat2: float
    lon2: float


class TableMathConstantsOutput(BaseModel):
    doubling_years: float
    distance_km: float
    diagonal_of_unit_square: float


class TableMathConstants(BaseSkill[TableMathConstantsInput, TableMathConstantsOutput]):
    name = "table_math_constants"
    description = "Compute compound growth, doubling time and great-circle distance."
    input_model = TableMathConstantsInput
    output_model = TableMathConstantsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableMathConstantsInput) -> TableMathConstantsOutput:
        if input_data.rate_percent <= 0:
            raise ValueError("rate must be positive")
        doubling = LN2 / math.log1p(input_data.rate_percent / 100)
        p1, p2 = input_data.lat1 * DEG, input_data.lat2 * DEG
        dlat, dlon = p2 - p1, (input_data.lon2 - input_data.lon1) * DEG
        a = math.sin(dlat / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dlon / 2) ** 2
        return TableMathConstantsOutput(doubling_years=round(doubling, 3), distance_km=round(2 * EARTH_RADIUS_KM * math.asin(math.sqrt(a)), 3),
                   diagonal_of_unit_square=SQRT2)
