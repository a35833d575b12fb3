from collections.abc import Sequence
from pathlib import Path

from kavi_assets.runtime.handles import Vault
from kavi_assets.skills.base import SkillContext
from skills.search_notes import SearchNotes, SearchNotesInput, cosine

NOTES = {
    "a.md": '---\ntitle: "Forge"\n---\nThe forge runs gates.\n',
    "b.md": "# Gates\n\nGates gates gates, and one forge.\n",
    "c.md": "# Lunch\n\nsoup\n",
    "x.txt": "forge forge forge",
}


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


def make(root: Path, model: Embedder | None = None) -> SearchNotes:
    for rel, text in NOTES.items():
        (root / rel).write_text(text)
    return SearchNotes(SkillContext(vault=Vault(root, writable=False), llm=model))


def test_lexical_ranking_with_title_boost(tmp_path: Path) -> None:
    out = make(tmp_path).execute(SearchNotesInput(query="forge"))
    assert out.method == "lexical" and out.paths == ["a.md", "b.md"] and out.count == 2
    assert out.results[0].title == "Forge" and out.results[0].snippet == "The forge runs gates."
    assert out.results[0].score > out.results[1].score > 0


def test_no_match_and_limit(tmp_path: Path) -> None:
    skill = make(tmp_path)
    assert skill.execute(SearchNotesInput(query="nothing")).count == 0
    out = skill.execute(SearchNotesInput(query="gates forge", limit=1))
    assert len(out.paths) == 1 and out.count == 2


def test_hybrid_with_embeddings(tmp_path: Path) -> None:
    out = make(tmp_path, Embedder()).execute(SearchNotesInput(query="forge soup"))
    assert out.method == "hybrid" and set(out.paths) == {"a.md", "b.md", "c.md"}
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0
