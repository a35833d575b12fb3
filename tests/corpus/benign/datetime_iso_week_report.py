# side_effect: READ_ONLY
# tricky: date.fromisoformat, isocalendar and timedelta arithmetic
# family: dates
"""Group ISO dates by ISO week and give each week's Monday."""

from datetime import date, timedelta
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DatetimeIsoWeekReportInput(BaseModel):
    dates: list[str]


class DatetimeIsoWeekReportOutput(BaseModel):
    weeks: dict[str, list[str]]
    mondays: dict[str, str]


class DatetimeIsoWeekReport(BaseSkill[DatetimeIsoWeekReportInput, DatetimeIsoWeekReportOutput]):
    name = "datetime_iso_week_report"
    description = "Group ISO dates by ISO week and give each week's Monday."
    input_model = DatetimeIsoWeekReportInput
    output_model = DatetimeIsoWeekReportOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DatetimeIsoWeekReportInput) -> DatetimeIsoWeekReportOutput:
        weeks: dict[str, list[str]] = {}
        mondays: dict[str, str] = {}
        for text in input_data.dates:
            day = date.fromisoformat(text)
            year, week, weekday = day.isocalendar()
            key = f"{year}-W{week:02d}"
            weeks.setdefault(key, []).append(day.isoformat())
            mondays[key] = (day - timedelta(days=weekday - 1)).isoformat()
        return DatetimeIsoWeekReportOutput(weeks=dict(sorted(weeks.items())), mondays=mondays)
