# side_effect: READ_ONLY
# tricky: io.StringIO as a text buffer and print(..., file=buffer)
# family: in-memory-io
"""Render a small aligned table report into text."""

import io
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IoStringioReportInput(BaseModel):
    rows: dict[str, int]
    title: str = "Report"


class IoStringioReportOutput(BaseModel):
    report: str


class IoStringioReport(BaseSkill[IoStringioReportInput, IoStringioReportOutput]):
    name = "io_stringio_report"
    description = "Render a small aligned table report into text."
    input_model = IoStringioReportInput
    output_model = IoStringioReportOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IoStringioReportInput) -> IoStringioReportOutput:
        buffer = io.StringIO()
        width = max((len(k) for k in input_data.rows), default=5)
        print(input_data.title, file=buffer)
        print("=" * len(input_data.title), file=buffer)
        for key, value in sorted(input_data.rows.items()):
            print(f"{key:<{width}}  {value:>6}", file=buffer)
        print(f"{'total':<{width}}  {sum(input_data.rows.values()):>6}", file=buffer)
        return IoStringioReportOutput(report=buffer.getvalue())
