# side_effect: READ_ONLY
# tricky: csv.writer writing into an io.StringIO buffer, never a file
# family: text-formats
"""Render a list of records as CSV text with a header row."""

import csv
import io
from typing import Any
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class CsvRecordsToTextInput(BaseModel):
    records: list[dict[str, Any]]
    delimiter: str = ","


class CsvRecordsToTextOutput(BaseModel):
    csv_text: str
    columns: list[str]


class CsvRecordsToText(BaseSkill[CsvRecordsToTextInput, CsvRecordsToTextOutput]):
    name = "csv_records_to_text"
    description = "Render a list of records as CSV text with a header row."
    input_model = CsvRecordsToTextInput
    output_model = CsvRecordsToTextOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: CsvRecordsToTextInput) -> CsvRecordsToTextOutput:
        columns: list[str] = []
        for record in input_data.records:
            for key in record:
                if key not in columns:
                    columns.append(key)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, delimiter=input_data.delimiter, lineterminator="\n")
        writer.writeheader()
        for record in input_data.records:
            writer.writerow({k: record.get(k, "") for k in columns})
        return CsvRecordsToTextOutput(csv_text=buffer.getvalue(), columns=columns)
