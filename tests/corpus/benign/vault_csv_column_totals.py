# side_effect: READ_ONLY
# tricky: csv over io.StringIO of text read through self.vault
# family: handles
"""Total the numeric columns of a CSV note in the vault."""

import csv
import io
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class VaultCsvColumnTotalsInput(BaseModel):
    path: str


class VaultCsvColumnTotalsOutput(BaseModel):
    totals: dict[str, float]
    rows: int


class VaultCsvColumnTotals(BaseSkill[VaultCsvColumnTotalsInput, VaultCsvColumnTotalsOutput]):
    name = "vault_csv_column_totals"
    description = "Total the numeric columns of a CSV note in the vault."
    input_model = VaultCsvColumnTotalsInput
    output_model = VaultCsvColumnTotalsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: VaultCsvColumnTotalsInput) -> VaultCsvColumnTotalsOutput:
        text = self.vault.read_text(input_data.path)
        totals: dict[str, float] = {}
        rows = 0
        for row in csv.DictReader(io.StringIO(text)):
            rows += 1
            for key, value in row.items():
                try:
                    totals[key] = totals.get(key, 0.0) + float(value)
                except (TypeError, ValueError):
                    continue
        return VaultCsvColumnTotalsOutput(totals=totals, rows=rows)
