import fnmatch

from skills.read_notes_by_tag import ReadNotesByTag, ReadNotesByTagInput, describe, front_tags


class DictVault:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def read_text(self, path: str) -> str:
        return self.files[path]

    def exists(self, path: str) -> bool:
        return path in self.files

    def list_files(self, pattern: str = "**/*") -> list[str]:
        suffix = pattern.rsplit("/", 1)[-1]
        return sorted(p for p in self.files if fnmatch.fnmatch(p.rsplit("/", 1)[-1], suffix))

    def write_text(self, path: str, content: str) -> str:
        raise PermissionError("read-only")


class Ctx:
    def __init__(self, files: dict[str, str]) -> None:
        self.vault = DictVault(files)
        self.http = None
        self.secrets = None


NOTES = {
    "notes/a.md": '---\ntitle: "Alpha"\ntags: ["home", "Errands"]\n---\n\nbody #Later\n',
    "b.md": "# Beta heading\n\nsee #home\n",
    "c.md": "no tags, just an issue number #12\n",
    "d.txt": "#home but not markdown\n",
}


def run(tag: str, limit: int = 50) -> list[str]:
    skill = ReadNotesByTag(Ctx(NOTES))
    return skill.execute(ReadNotesByTagInput(tag=tag, limit=limit)).paths


def test_front_matter_and_inline_tags() -> None:
    assert run("home") == ["b.md", "notes/a.md"]
    assert run("#LATER") == ["notes/a.md"]
    assert run("12") == []


def test_titles() -> None:
    assert describe("notes/a.md", NOTES["notes/a.md"]).title == "Alpha"
    assert describe("b.md", NOTES["b.md"]).title == "Beta heading"
    assert describe("x/c.md", "plain").title == "c"
    assert describe("y.md", "---\ntitle: 'Quoted'\n---\n").title == "Quoted"


def test_limit_and_count() -> None:
    out = ReadNotesByTag(Ctx(NOTES)).execute(ReadNotesByTagInput(tag="home", limit=1))
    assert out.paths == ["b.md"] and out.count == 2


def test_loose_tag_lists() -> None:
    assert front_tags("[a, 'B']") == ["a", "b"]
    assert front_tags('"solo"') == []
    assert describe("z.md", "---\nunterminated\n").tags == []
