from collections.abc import Sequence

from skills.search_notes import SearchNotes, SearchNotesInput, cosine


class Vault:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def read_text(self, path: str) -> str:
        return self.files[path]

    def exists(self, path: str) -> bool:
        return path in self.files

    def list_files(self, pattern: str = "**/*") -> list[str]:
        return sorted(p for p in self.files if p.endswith(".md"))

    def write_text(self, path: str, content: str) -> str:
        raise PermissionError(path)


class Embedder:
    """Embeds a text as [count of 'soup', count of 'forge'] so a test can steer the ranking."""

    def can_complete(self) -> bool:
        return False

    def can_embed(self) -> bool:
        return True

    def complete(self, prompt: str, max_tokens: int = 256) -> str:
        raise RuntimeError("no completions")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(t.lower().count("soup")), float(t.lower().count("forge"))] for t in texts]


class Ctx:
    def __init__(self, files: dict[str, str], model: Embedder | None = None) -> None:
        self.vault = Vault(files)
        self.http = None
        self.secrets = None
        self.llm = model


NOTES = {
    "a.md": '---\ntitle: "Forge"\n---\nThe forge runs gates.\n',
    "b.md": "# Gates\n\nGates gates gates, and one forge.\n",
    "c.md": "# Lunch\n\nsoup\n",
    "x.txt": "forge forge forge",
}


def test_lexical_ranking_with_title_boost() -> None:
    out = SearchNotes(Ctx(NOTES)).execute(SearchNotesInput(query="forge"))
    assert out.method == "lexical" and out.paths == ["a.md", "b.md"] and out.count == 2
    assert out.results[0].title == "Forge" and out.results[0].snippet == "The forge runs gates."
    assert out.results[0].score > out.results[1].score > 0


def test_no_match_and_limit() -> None:
    assert SearchNotes(Ctx(NOTES)).execute(SearchNotesInput(query="nothing")).count == 0
    out = SearchNotes(Ctx(NOTES)).execute(SearchNotesInput(query="gates forge", limit=1))
    assert len(out.paths) == 1 and out.count == 2


def test_hybrid_with_embeddings() -> None:
    out = SearchNotes(Ctx(NOTES, Embedder())).execute(SearchNotesInput(query="forge soup"))
    assert out.method == "hybrid" and set(out.paths) == {"a.md", "b.md", "c.md"}
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0
