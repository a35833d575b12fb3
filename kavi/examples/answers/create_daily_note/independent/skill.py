"""The daily note of a date, created once (written independently from the spec)."""

import datetime
import re

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
WEEKDAYS = {0: "Monday", 1: "Tuesday", 2: "Wednesday", 3: "Thursday", 4: "Friday", 5: "Saturday", 6: "Sunday"}
MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December"]


class CreateDailyNoteInput(BaseModel):
    date: str | None = None
    body: str = ""


class CreateDailyNoteOutput(BaseModel):
    path: str
    created: bool
    title: str


def parse_day(raw: str | None) -> datetime.date:
    if raw is None:
        return datetime.date.today()
    if not ISO_DAY.fullmatch(raw):
        raise ValueError(f"{raw!r} is not a date written YYYY-MM-DD")
    year, month, day = (int(part) for part in raw.split("-"))
    return datetime.date(year, month, day)  # ValueError for a day that does not exist


class CreateDailyNote(BaseSkill[CreateDailyNoteInput, CreateDailyNoteOutput]):
    name = "create_daily_note"
    description = "Create the daily note of a date unless it exists."
    input_model = CreateDailyNoteInput
    output_model = CreateDailyNoteOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: CreateDailyNoteInput) -> CreateDailyNoteOutput:
        day = parse_day(input_data.date)
        title = f"{WEEKDAYS[day.weekday()]} {day.day} {MONTH_NAMES[day.month - 1]} {day.year}"
        target = "daily/" + day.isoformat() + ".md"
        if self.vault.exists(target):
            return CreateDailyNoteOutput(path=target, created=False, title=title)
        lines = ["---", f'title: "{title}"', 'tags: ["daily"]', "---", "", "## Notes"]
        if input_data.body.strip():
            lines += ["", input_data.body.strip()]
        written = self.vault.write_text(target, "\n".join(lines) + "\n")
        return CreateDailyNoteOutput(path=written, created=True, title=title)
