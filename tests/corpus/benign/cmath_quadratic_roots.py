# side_effect: READ_ONLY
# tricky: cmath.sqrt and complex results rendered as strings
# family: numbers
"""Solve a quadratic equation, including complex roots."""

import cmath
import math
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class CmathQuadraticRootsInput(BaseModel):
    a: float
    b: float
    c: float


class CmathQuadraticRootsOutput(BaseModel):
    roots: list[str]
    real: bool


class CmathQuadraticRoots(BaseSkill[CmathQuadraticRootsInput, CmathQuadraticRootsOutput]):
    name = "cmath_quadratic_roots"
    description = "Solve a quadratic equation, including complex roots."
    input_model = CmathQuadraticRootsInput
    output_model = CmathQuadraticRootsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: CmathQuadraticRootsInput) -> CmathQuadraticRootsOutput:
        if math.isclose(input_data.a, 0.0):
            raise ValueError("a must not be zero")
        disc = cmath.sqrt(input_data.b ** 2 - 4 * input_data.a * input_data.c)
        roots = [(-input_data.b + disc) / (2 * input_data.a), (-input_data.b - disc) / (2 * input_data.a)]
        real = all(math.isclose(r.imag, 0.0, abs_tol=1e-12) for r in roots)
        return CmathQuadraticRootsOutput(roots=[f"{r.real:g}" if real else f"{r.real:g}{r.imag:+g}j" for r in roots], real=real)
