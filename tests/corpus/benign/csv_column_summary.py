# side_effect: READ_ONLY
# tricky: csv.DictReader over io.StringIO: csv and io are mixed modules (open is elsewhere)
# family: text-formats
"""Summarise one numeric column of a CSV document given as text."""

import csv
import io
import statistics
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class CsvColumnSummaryInput(BaseModel):
    csv_text: str
    column: str


class CsvColumnSummaryOutput(BaseModel):
    rows: int
    skipped: int
    mean: float | None
    median: float | None


class CsvColumnSummary(BaseSkill[CsvColumnSummaryInput, CsvColumnSummaryOutput]):
    name = "csv_column_summary"
    description = "Summarise one numeric column of a CSV document given as text."
    input_model = CsvColumnSummaryInput
    output_model = CsvColumnSummaryOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: CsvColumnSummaryInput) -> CsvColumnSummaryOutput:
        reader = csv.DictReader(io.StringIO(input_data.csv_text))
        values: list[float] = []
        skipped = 0
        rows = 0
        for row in reader:
            rows += 1
            try:
                values.append(float(row.get(input_data.column) or ""))
            except ValueError:
                skipped += 1
        if not values:
            return CsvColumnSummaryOutput(rows=rows, skipped=skipped, mean=None, median=None)
        return CsvColumnSummaryOutput(rows=rows, skipped=skipped, mean=statistics.fmean(values), median=statistics.median(values))
