# side_effect: READ_ONLY
# tricky: a module-level dict of fractions.Fraction values built from a comprehension
# family: module-tables
"""Scale a recipe by a factor, keeping quantities as kitchen fractions."""

from fractions import Fraction
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


NICE = {str(f): f for f in (Fraction(n, d) for d in (2, 3, 4, 8) for n in range(1, d))}


class TableFractionScaleInput(BaseModel):
    ingredients: dict[str, str]
    factor: str


class TableFractionScaleOutput(BaseModel):
    scaled: dict[str, str]


class TableFractionScale(BaseSkill[TableFractionScaleInput, TableFractionScaleOutput]):
    name = "table_fraction_scale"
    description = "Scale a recipe by a factor, keeping quantities as kitchen fractions."
    input_model = TableFractionScaleInput
    output_model = TableFractionScaleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableFractionScaleInput) -> TableFractionScaleOutput:
        factor = Fraction(input_data.factor)
        scaled = {}
        for name, amount in input_data.ingredients.items():
            q = Fraction(amount) * factor
            whole, rest = divmod(q, 1)
            part = min(NICE.values(), key=lambda f: abs(f - rest)) if rest else Fraction(0)
            scaled[name] = f"{whole} {part}".strip() if whole and part else str(whole or part)
        return TableFractionScaleOutput(scaled=scaled)
