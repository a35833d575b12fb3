import datetime as dt
from pathlib import Path

import pytest
from pydantic import ValidationError

from kavi_assets.runtime.handles import Vault
from kavi_assets.skills.base import SkillContext
from skills.create_daily_note import CreateDailyNote, CreateDailyNoteInput, title_for


def make(root: Path) -> CreateDailyNote:
    return CreateDailyNote(SkillContext(vault=Vault(root, writable=True)))


def test_creates_note_with_title_and_body(tmp_path: Path) -> None:
    out = make(tmp_path).execute(CreateDailyNoteInput(date="2026-11-24", body="- review"))
    assert out.created and out.path == "daily/2026-11-24.md"
    assert out.title == "Tuesday 24 November 2026"
    text = (tmp_path / out.path).read_text()
    assert text.startswith('---\ntitle: "Tuesday 24 November 2026"\n')
    assert text.endswith("## Notes\n\n- review\n")


def test_existing_note_is_kept(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir()
    (tmp_path / "daily" / "2026-01-05.md").write_text("mine\n")
    out = make(tmp_path).execute(CreateDailyNoteInput(date="2026-01-05", body="new"))
    assert not out.created and (tmp_path / "daily" / "2026-01-05.md").read_text() == "mine\n"


def test_today_by_default(tmp_path: Path) -> None:
    out = make(tmp_path).execute(CreateDailyNoteInput())
    assert out.path == f"daily/{dt.date.today().isoformat()}.md"
    assert (tmp_path / out.path).read_text().endswith("## Notes\n")


def test_bad_date_refused() -> None:
    with pytest.raises(ValidationError):
        CreateDailyNoteInput(date="2026-02-30")
    assert title_for(dt.date(2024, 2, 29)) == "Thursday 29 February 2024"
