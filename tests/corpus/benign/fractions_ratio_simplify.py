# side_effect: READ_ONLY
# tricky: fractions.Fraction arithmetic and limit_denominator
# family: numbers
"""Simplify ratios and approximate a decimal with a small fraction."""

from fractions import Fraction
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FractionsRatioSimplifyInput(BaseModel):
    ratios: list[str]
    approximate: float
    max_denominator: int = 1000


class FractionsRatioSimplifyOutput(BaseModel):
    simplified: list[str]
    approximation: str
    error: float


class FractionsRatioSimplify(BaseSkill[FractionsRatioSimplifyInput, FractionsRatioSimplifyOutput]):
    name = "fractions_ratio_simplify"
    description = "Simplify ratios and approximate a decimal with a small fraction."
    input_model = FractionsRatioSimplifyInput
    output_model = FractionsRatioSimplifyOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FractionsRatioSimplifyInput) -> FractionsRatioSimplifyOutput:
        simplified = [str(Fraction(r.replace(":", "/"))) for r in input_data.ratios]
        approx = Fraction(input_data.approximate).limit_denominator(max(1, input_data.max_denominator))
        return FractionsRatioSimplifyOutput(simplified=simplified, approximation=str(approx), error=abs(float(approx) - input_data.approximate))
