# side_effect: READ_ONLY
# tricky: math.hypot, dist, degrees, atan2, comb and prod
# family: numbers
"""Compute the perimeter and area of a polygon and some combinatorics on its vertices."""

import math
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class MathGeometryHelpersInput(BaseModel):
    points: list[tuple[float, float]]


class MathGeometryHelpersOutput(BaseModel):
    perimeter: float
    area: float
    diagonals: int
    angles_deg: list[float]


class MathGeometryHelpers(BaseSkill[MathGeometryHelpersInput, MathGeometryHelpersOutput]):
    name = "math_geometry_helpers"
    description = "Compute the perimeter and area of a polygon and some combinatorics on its vertices."
    input_model = MathGeometryHelpersInput
    output_model = MathGeometryHelpersOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: MathGeometryHelpersInput) -> MathGeometryHelpersOutput:
        pts = input_data.points
        n = len(pts)
        if n < 3:
            raise ValueError("a polygon needs three points")
        perimeter = sum(math.dist(pts[i], pts[(i + 1) % n]) for i in range(n))
        area = abs(sum(pts[i][0] * pts[(i + 1) % n][1] - pts[(i + 1) % n][0] * pts[i][1] for i in range(n))) / 2
        angles = [math.degrees(math.atan2(y, x)) for x, y in pts]
        return MathGeometryHelpersOutput(perimeter=round(perimeter, 6), area=area, diagonals=math.comb(n, 2) - n,
                   angles_deg=[round(a, 3) for a in angles])
