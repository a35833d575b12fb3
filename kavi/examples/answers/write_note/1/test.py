from pathlib import Path

import pytest

from kavi_assets.runtime.handles import Vault
from kavi_assets.skills.base import SkillContext
from skills.write_note import WriteNote, WriteNoteInput, slugify


def make(root: Path) -> WriteNote:
    return WriteNote(SkillContext(vault=Vault(root, writable=True)))


def test_writes_front_matter_and_body(tmp_path: Path) -> None:
    out = make(tmp_path).execute(WriteNoteInput(title="Hello", body="First note", tags=["demo"]))
    assert out.path == "notes/hello.md" and out.written
    text = (tmp_path / "notes" / "hello.md").read_text()
    assert text == '---\ntitle: "Hello"\ntags: ["demo"]\n---\n\nFirst note\n'
    assert out.size == len(text.encode())


def test_tags_are_normalized(tmp_path: Path) -> None:
    make(tmp_path).execute(WriteNoteInput(title="T", body="b", tags=["#Home", "home", "Work"]))
    assert 'tags: ["home", "work"]' in (tmp_path / "notes" / "t.md").read_text()


def test_same_note_twice_is_not_rewritten(tmp_path: Path) -> None:
    data = WriteNoteInput(title="Hello", body="x")
    assert make(tmp_path).execute(data).written
    assert not make(tmp_path).execute(data).written


def test_different_note_needs_overwrite(tmp_path: Path) -> None:
    skill = make(tmp_path)
    skill.execute(WriteNoteInput(title="Hello", body="one"))
    with pytest.raises(FileExistsError):
        skill.execute(WriteNoteInput(title="Hello", body="two"))
    assert skill.execute(WriteNoteInput(title="Hello", body="two", overwrite=True)).written
    assert (tmp_path / "notes" / "hello.md").read_text().endswith("two\n")


def test_bad_title_and_tag(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        slugify("!!!")
    with pytest.raises(ValueError):
        make(tmp_path).execute(WriteNoteInput(title="ok", body="b", tags=["no spaces"]))
    assert slugify("Groceries & Plans, 2026!") == "groceries-plans-2026"
