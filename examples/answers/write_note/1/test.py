import pytest

from skills.write_note import WriteNote, WriteNoteInput, slugify


class MemoryVault:
    """An in-memory stand-in for the vault handle, with the same methods."""

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
    def __init__(self, vault: MemoryVault) -> None:
        self.vault = vault
        self.http = None
        self.secrets = None


def make() -> tuple[WriteNote, MemoryVault]:
    vault = MemoryVault()
    return WriteNote(Ctx(vault)), vault


def test_writes_front_matter_and_body() -> None:
    skill, vault = make()
    out = skill.execute(WriteNoteInput(title="Hello", body="First note", tags=["demo"]))
    assert out.path == "notes/hello.md" and out.written
    assert vault.files["notes/hello.md"] == '---\ntitle: "Hello"\ntags: ["demo"]\n---\n\nFirst note\n'
    assert out.size == len(vault.files["notes/hello.md"])


def test_tags_are_normalized() -> None:
    skill, vault = make()
    skill.execute(WriteNoteInput(title="T", body="b", tags=["#Home", "home", "Work"]))
    assert 'tags: ["home", "work"]' in vault.files["notes/t.md"]


def test_same_note_twice_is_not_rewritten() -> None:
    skill, _ = make()
    data = WriteNoteInput(title="Hello", body="x")
    assert skill.execute(data).written
    assert not skill.execute(data).written


def test_different_note_needs_overwrite() -> None:
    skill, vault = make()
    skill.execute(WriteNoteInput(title="Hello", body="one"))
    with pytest.raises(FileExistsError):
        skill.execute(WriteNoteInput(title="Hello", body="two"))
    assert skill.execute(WriteNoteInput(title="Hello", body="two", overwrite=True)).written
    assert vault.files["notes/hello.md"].endswith("two\n")


def test_bad_title_and_tag() -> None:
    with pytest.raises(ValueError):
        slugify("!!!")
    skill, _ = make()
    with pytest.raises(ValueError):
        skill.execute(WriteNoteInput(title="ok", body="b", tags=["no spaces"]))
    assert slugify("Groceries & Plans, 2026!") == "groceries-plans-2026"
