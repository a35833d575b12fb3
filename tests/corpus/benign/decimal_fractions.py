# side_effect: READ_ONLY
# tricky: Decimal and Fraction arithmetic with module-level Decimal constants
"""Decimal and Fraction arithmetic with module-level Decimal constants."""

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


CENT = Decimal("0.01")


class DecimalFractionsInput(BaseModel):
    text: str = ""


class DecimalFractionsOutput(BaseModel):
    result: str


class DecimalFractions(BaseSkill[DecimalFractionsInput, DecimalFractionsOutput]):
    name = "decimal_fractions"
    description = "Corpus skill: Decimal and Fraction arithmetic with module-level Decimal constants."
    input_model = DecimalFractionsInput
    output_model = DecimalFractionsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DecimalFractionsInput) -> DecimalFractionsOutput:
        amount = Decimal(input_data.text or "0").quantize(CENT, rounding=ROUND_HALF_UP)
        ratio = Fraction(3, 8) + Fraction(1, 8)
        return DecimalFractionsOutput(result=f"{amount} {ratio}")
