# side_effect: READ_ONLY
# tricky: decimal.localcontext with ROUND_HALF_UP and quantize
# family: numbers
"""Split a bill between people with cent-exact banker-free rounding."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


CENT = Decimal("0.01")


class DecimalMoneyRoundingInput(BaseModel):
    total: str
    people: int
    tip_percent: str = "0"


class DecimalMoneyRoundingOutput(BaseModel):
    with_tip: str
    shares: list[str]


class DecimalMoneyRounding(BaseSkill[DecimalMoneyRoundingInput, DecimalMoneyRoundingOutput]):
    name = "decimal_money_rounding"
    description = "Split a bill between people with cent-exact banker-free rounding."
    input_model = DecimalMoneyRoundingInput
    output_model = DecimalMoneyRoundingOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DecimalMoneyRoundingInput) -> DecimalMoneyRoundingOutput:
        if input_data.people < 1:
            raise ValueError("at least one person")
        try:
            total = Decimal(input_data.total) * (1 + Decimal(input_data.tip_percent) / 100)
        except InvalidOperation as err:
            raise ValueError("amounts must be decimal numbers") from err
        with localcontext() as ctx:
            ctx.rounding = ROUND_HALF_UP
            total = total.quantize(CENT)
            base = (total / input_data.people).quantize(CENT)
            shares = [base] * input_data.people
            shares[-1] = total - base * (input_data.people - 1)
        return DecimalMoneyRoundingOutput(with_tip=str(total), shares=[str(s) for s in shares])
