# side_effect: READ_ONLY
# tricky: calendar.isleap/leapdays and calendar.TextCalendar(...).formatmonth into a string
# family: dates
"""List leap years in a range and render one month as text."""

import calendar
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class CalendarLeapYearsInput(BaseModel):
    first: int
    last: int


class CalendarLeapYearsOutput(BaseModel):
    leap_years: list[int]
    leap_days: int
    february_text: str


class CalendarLeapYears(BaseSkill[CalendarLeapYearsInput, CalendarLeapYearsOutput]):
    name = "calendar_leap_years"
    description = "List leap years in a range and render one month as text."
    input_model = CalendarLeapYearsInput
    output_model = CalendarLeapYearsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: CalendarLeapYearsInput) -> CalendarLeapYearsOutput:
        if input_data.last < input_data.first:
            raise ValueError("last must not be before first")
        leaps = [y for y in range(input_data.first, input_data.last + 1) if calendar.isleap(y)]
        text = calendar.TextCalendar(firstweekday=calendar.MONDAY).formatmonth(input_data.first, 2)
        return CalendarLeapYearsOutput(leap_years=leaps, leap_days=calendar.leapdays(input_data.first, input_data.last + 1),
                   february_text=text)
