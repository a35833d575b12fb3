# side_effect: READ_ONLY
# tricky: a module-level dict comprehension inverting a constant tuple table
# family: module-tables
"""Convert integers to Roman numerals and back."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


PAIRS = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
         (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))
VALUES = {symbol: value for value, symbol in PAIRS if len(symbol) == 1}


class TableRomanNumeralsInput(BaseModel):
    numbers: list[int] = []
    numerals: list[str] = []


class TableRomanNumeralsOutput(BaseModel):
    as_roman: list[str]
    as_int: list[int]


class TableRomanNumerals(BaseSkill[TableRomanNumeralsInput, TableRomanNumeralsOutput]):
    name = "table_roman_numerals"
    description = "Convert integers to Roman numerals and back."
    input_model = TableRomanNumeralsInput
    output_model = TableRomanNumeralsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableRomanNumeralsInput) -> TableRomanNumeralsOutput:
        as_roman = []
        for n in input_data.numbers:
            if not 0 < n < 4000:
                raise ValueError(f"{n} is out of range 1..3999")
            out = ""
            for value, symbol in PAIRS:
                count, n = divmod(n, value)
                out += symbol * count
            as_roman.append(out)
        as_int = []
        for text in input_data.numerals:
            digits = [VALUES[c] for c in text.upper()]
            as_int.append(sum(-d if i + 1 < len(digits) and d < digits[i + 1] else d for i, d in enumerate(digits)))
        return TableRomanNumeralsOutput(as_roman=as_roman, as_int=as_int)
