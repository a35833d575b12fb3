from collections.abc import Sequence

from skills.summarize_note import SummarizeNote, SummarizeNoteInput, body_of, extractive, split_sentences


class Vault:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def read_text(self, path: str) -> str:
        return self.files[path]

    def exists(self, path: str) -> bool:
        return path in self.files

    def list_files(self, pattern: str = "**/*") -> list[str]:
        return sorted(self.files)

    def write_text(self, path: str, content: str) -> str:
        raise PermissionError(path)


class Model:
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


class Ctx:
    def __init__(self, files: dict[str, str], model: Model | None = None) -> None:
        self.vault = Vault(files)
        self.http = None
        self.secrets = None
        self.llm = model


NOTE = "---\ntitle: x\n---\n# Plan\n\nThe forge builds skills. The forge verifies skills. Lunch was good.\n"


def test_extractive_keeps_best_sentences_in_order() -> None:
    out = SummarizeNote(Ctx({"n.md": NOTE})).execute(SummarizeNoteInput(path="n.md", max_sentences=2))
    assert out.method == "extractive" and out.sentences == 2
    assert out.summary == "The forge builds skills. The forge verifies skills."


def test_short_note_kept_whole() -> None:
    assert extractive("One. Two.", 3) == ["One.", "Two."]
    assert split_sentences("a\n\nb c") == ["a", "b c"]
    assert split_sentences(body_of("- item\n- two\n## Head\ntext")) == ["item", "two", "text"]


def test_model_summary_and_fallback() -> None:
    out = SummarizeNote(Ctx({"n.md": NOTE}, Model("  It builds.  "))).execute(SummarizeNoteInput(path="n.md"))
    assert out.method == "model" and out.summary == "It builds." and out.sentences == 1
    skill = SummarizeNote(Ctx({"n.md": NOTE}, Model(None)))
    out = skill.execute(SummarizeNoteInput(path="n.md", max_sentences=1))
    assert out.method == "extractive" and out.sentences == 1
