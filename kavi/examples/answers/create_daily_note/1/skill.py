"""Create the daily note for a date in the vault, never overwriting an existing one."""

import datetime as dt

from pydantic import BaseModel, field_validator

from kavi_assets.skills.base import BaseSkill, SideEffectClass

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class CreateDailyNoteInput(BaseModel):
    date: str | None = None
    body: str = ""

    @field_validator("date")
    @classmethod
    def iso_date(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                dt.date.fromisoformat(value)
            except ValueError:
                raise ValueError(f"date {value!r} is not an ISO date (YYYY-MM-DD)") from None
        return value


class CreateDailyNoteOutput(BaseModel):
    path: str
    created: bool
    title: str


def title_for(day: dt.date) -> str:
    return f"{DAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]} {day.year}"


def render(day: dt.date, body: str) -> str:
    text = f'---\ntitle: "{title_for(day)}"\ntags: ["daily"]\ndate: {day.isoformat()}\n---\n\n## Notes\n'
    if body.strip():
        text += "\n" + body.strip("\n") + "\n"
    return text


class CreateDailyNote(BaseSkill[CreateDailyNoteInput, CreateDailyNoteOutput]):
    name = "create_daily_note"
    description = "Create the daily note daily/YYYY-MM-DD.md, leaving an existing one untouched."
    input_model = CreateDailyNoteInput
    output_model = CreateDailyNoteOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: CreateDailyNoteInput) -> CreateDailyNoteOutput:
        day = dt.date.fromisoformat(input_data.date) if input_data.date else dt.date.today()
        path = f"daily/{day.isoformat()}.md"
        title = title_for(day)
        if self.vault.exists(path):
            return CreateDailyNoteOutput(path=path, created=False, title=title)
        stored = self.vault.write_text(path, render(day, input_data.body))
        return CreateDailyNoteOutput(path=stored, created=True, title=title)
