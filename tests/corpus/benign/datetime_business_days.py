# side_effect: READ_ONLY
# tricky: datetime.strptime with a format and a module-level frozenset of holidays
# family: dates
"""Count the business days between two dates, skipping weekends and listed holidays."""

from datetime import datetime, timedelta
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


WEEKEND = frozenset({5, 6})
DATE_FORMAT = "%d/%m/%Y"


class DatetimeBusinessDaysInput(BaseModel):
    start: str
    end: str
    holidays: list[str] = []


class DatetimeBusinessDaysOutput(BaseModel):
    business_days: int
    skipped: list[str]


class DatetimeBusinessDays(BaseSkill[DatetimeBusinessDaysInput, DatetimeBusinessDaysOutput]):
    name = "datetime_business_days"
    description = "Count the business days between two dates, skipping weekends and listed holidays."
    input_model = DatetimeBusinessDaysInput
    output_model = DatetimeBusinessDaysOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DatetimeBusinessDaysInput) -> DatetimeBusinessDaysOutput:
        start = datetime.strptime(input_data.start, DATE_FORMAT).date()
        end = datetime.strptime(input_data.end, DATE_FORMAT).date()
        holidays = {datetime.strptime(h, DATE_FORMAT).date() for h in input_data.holidays}
        count = 0
        skipped: list[str] = []
        day = start
        while day <= end:
            if day.weekday() in WEEKEND or day in holidays:
                skipped.append(day.isoformat())
            else:
                count += 1
            day += timedelta(days=1)
        return DatetimeBusinessDaysOutput(business_days=count, skipped=skipped)
