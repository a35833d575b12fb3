from collections.abc import Sequence
from pathlib import Path

from kavi_assets.runtime.handles import Vault
from kavi_assets.skills.base import SkillContext
from skills.summarize_note import SummarizeNote, SummarizeNoteInput, body_of, extractive, split_sentences

NOTE = "---\ntitle: x\n---\n# Plan\n\nThe forge builds skills. The forge verifies skills. Lunch was good.\n"


class ScriptedModel:
    """A model handle that answers one text, or fails when given none."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer

    def can_complete(self) -> bool:
        return True

    def can_embed(self) -> bool:
        return False

    def complete(self, prompt: str, max_tokens: int = 256) -> str:
        if self.answer is None:
            raise RuntimeError("endpoint down")
        return self.answer

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("no embeddings")


def make(root: Path, model: ScriptedModel | None = None) -> SummarizeNote:
    (root / "n.md").write_text(NOTE)
    return SummarizeNote(SkillContext(vault=Vault(root, writable=False), llm=model))


def test_extractive_keeps_best_sentences_in_order(tmp_path: Path) -> None:
    out = make(tmp_path).execute(SummarizeNoteInput(path="n.md", max_sentences=2))
    assert out.method == "extractive" and out.sentences == 2
    assert out.summary == "The forge builds skills. The forge verifies skills."


def test_short_note_kept_whole() -> None:
    assert extractive("One. Two.", 3) == ["One.", "Two."]
    assert split_sentences("a\n\nb c") == ["a", "b c"]
    assert split_sentences(body_of("- item\n- two\n## Head\ntext")) == ["item", "two", "text"]


def test_model_summary_and_fallback(tmp_path: Path) -> None:
    out = make(tmp_path, ScriptedModel("  It builds.  ")).execute(SummarizeNoteInput(path="n.md"))
    assert out.method == "model" and out.summary == "It builds." and out.sentences == 1
    out = make(tmp_path, ScriptedModel(None)).execute(SummarizeNoteInput(path="n.md", max_sentences=1))
    assert out.method == "extractive" and out.sentences == 1
