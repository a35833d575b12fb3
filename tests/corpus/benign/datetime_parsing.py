# side_effect: READ_ONLY
# tricky: datetime parsing with a timedelta module constant
"""Datetime parsing with a timedelta module constant."""

from datetime import datetime, timedelta, timezone
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


GRACE = timedelta(days=3)


class DatetimeParsingInput(BaseModel):
    text: str = ""


class DatetimeParsingOutput(BaseModel):
    result: str


class DatetimeParsing(BaseSkill[DatetimeParsingInput, DatetimeParsingOutput]):
    name = "datetime_parsing"
    description = "Corpus skill: datetime parsing with a timedelta module constant."
    input_model = DatetimeParsingInput
    output_model = DatetimeParsingOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DatetimeParsingInput) -> DatetimeParsingOutput:
        when = datetime.strptime(input_data.text, "%Y-%m-%d").replace(tzinfo=timezone.utc)
        return DatetimeParsingOutput(result=(when + GRACE).isoformat())
