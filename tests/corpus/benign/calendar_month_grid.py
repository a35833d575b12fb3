# side_effect: READ_ONLY
# tricky: calendar.monthcalendar, monthrange and calendar.month_name
# family: dates
"""Render a month as a grid of weeks and count its weekdays."""

import calendar
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class CalendarMonthGridInput(BaseModel):
    year: int
    month: int


class CalendarMonthGridOutput(BaseModel):
    title: str
    weeks: list[list[int]]
    days_in_month: int
    weekday_counts: dict[str, int]


class CalendarMonthGrid(BaseSkill[CalendarMonthGridInput, CalendarMonthGridOutput]):
    name = "calendar_month_grid"
    description = "Render a month as a grid of weeks and count its weekdays."
    input_model = CalendarMonthGridInput
    output_model = CalendarMonthGridOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: CalendarMonthGridInput) -> CalendarMonthGridOutput:
        if not 1 <= input_data.month <= 12:
            raise ValueError("month must be 1..12")
        weeks = calendar.monthcalendar(input_data.year, input_data.month)
        _, days = calendar.monthrange(input_data.year, input_data.month)
        counts = {calendar.day_abbr[i]: sum(1 for w in weeks if w[i]) for i in range(7)}
        return CalendarMonthGridOutput(title=f"{calendar.month_name[input_data.month]} {input_data.year}", weeks=weeks,
                   days_in_month=days, weekday_counts=counts)
