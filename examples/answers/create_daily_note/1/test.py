import datetime as dt

import pytest
from pydantic import ValidationError

from skills.create_daily_note import CreateDailyNote, CreateDailyNoteInput, title_for


class Vault:
    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def read_text(self, path: str) -> str:
        return self.files[path]

    def exists(self, path: str) -> bool:
        return path in self.files

    def list_files(self, pattern: str = "**/*") -> list[str]:
        return sorted(self.files)

    def write_text(self, path: str, content: str) -> str:
        self.files[path] = content
        return path


class Ctx:
    def __init__(self) -> None:
        self.vault = Vault()
        self.http = None
        self.secrets = None


def test_creates_note_with_title_and_body() -> None:
    ctx = Ctx()
    out = CreateDailyNote(ctx).execute(CreateDailyNoteInput(date="2026-11-24", body="- review"))
    assert out.created and out.path == "daily/2026-11-24.md"
    assert out.title == "Tuesday 24 November 2026"
    text = ctx.vault.files[out.path]
    assert text.startswith('---\ntitle: "Tuesday 24 November 2026"\n')
    assert text.endswith("## Notes\n\n- review\n")


def test_existing_note_is_kept() -> None:
    ctx = Ctx()
    ctx.vault.files["daily/2026-01-05.md"] = "mine\n"
    out = CreateDailyNote(ctx).execute(CreateDailyNoteInput(date="2026-01-05", body="new"))
    assert not out.created and ctx.vault.files["daily/2026-01-05.md"] == "mine\n"


def test_today_by_default() -> None:
    ctx = Ctx()
    out = CreateDailyNote(ctx).execute(CreateDailyNoteInput())
    assert out.path == f"daily/{dt.date.today().isoformat()}.md"
    assert ctx.vault.files[out.path].endswith("## Notes\n")


def test_bad_date_refused() -> None:
    with pytest.raises(ValidationError):
        CreateDailyNoteInput(date="2026-02-30")
    assert title_for(dt.date(2024, 2, 29)) == "Thursday 29 February 2024"
