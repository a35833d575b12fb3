from pathlib import Path

import pytest

from kavi_assets.runtime.handles import Vault
from kavi_assets.skills.base import SkillContext
from skills.read_notes_by_tag import ReadNotesByTag, ReadNotesByTagInput, describe, front_tags

NOTES = {
    "notes/a.md": '---\ntitle: "Alpha"\ntags: ["home", "Errands"]\n---\n\nbody #Later\n',
    "b.md": "# Beta heading\n\nsee #home\n",
    "c.md": "no tags, just an issue number #12\n",
    "d.txt": "#home but not markdown\n",
}


@pytest.fixture
def skill(tmp_path: Path) -> ReadNotesByTag:
    for rel, text in NOTES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return ReadNotesByTag(SkillContext(vault=Vault(tmp_path, writable=False)))


def test_front_matter_and_inline_tags(skill: ReadNotesByTag) -> None:
    assert skill.execute(ReadNotesByTagInput(tag="home")).paths == ["b.md", "notes/a.md"]
    assert skill.execute(ReadNotesByTagInput(tag="#LATER")).paths == ["notes/a.md"]
    assert skill.execute(ReadNotesByTagInput(tag="12")).paths == []


def test_titles() -> None:
    assert describe("notes/a.md", NOTES["notes/a.md"]).title == "Alpha"
    assert describe("b.md", NOTES["b.md"]).title == "Beta heading"
    assert describe("x/c.md", "plain").title == "c"
    assert describe("y.md", "---\ntitle: 'Quoted'\n---\n").title == "Quoted"


def test_limit_and_count(skill: ReadNotesByTag) -> None:
    out = skill.execute(ReadNotesByTagInput(tag="home", limit=1))
    assert out.paths == ["b.md"] and out.count == 2


def test_loose_tag_lists() -> None:
    assert front_tags("[a, 'B']") == ["a", "b"]
    assert front_tags('"solo"') == []
    assert describe("z.md", "---\nunterminated\n").tags == []
