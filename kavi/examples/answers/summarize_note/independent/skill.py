"""A short summary of a vault note: the model's when it can complete, extractive otherwise (written independently
from the spec)."""

import math
import re

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

LIST_ITEM = re.compile(r"\s*(?:[-*+]|[0-9]+[.)])\s+")
HEADING_LINE = re.compile(r"\s*#{1,6}\s")
TERM = re.compile(r"[a-z0-9]+")
COMMON = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "i", "in", "is",
    "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "what", "which", "with", "you",
})


class SummarizeNoteInput(BaseModel):
    path: str
    max_sentences: int = 3


class SummarizeNoteOutput(BaseModel):
    summary: str
    sentences: int
    method: str
    path: str


def sentences_of(text: str) -> list[str]:
    """Front matter dropped, headings dropped, each list item a sentence, paragraphs split after . ! or ?"""
    if text.startswith("---\n") and (close := text.find("\n---", 4)) >= 0:
        text = text[close + 4 :]
    paragraphs: list[list[str]] = [[]]
    for line in text.split("\n"):
        if HEADING_LINE.match(line):
            continue
        item = LIST_ITEM.match(line)
        if item:
            paragraphs += [[line[item.end() :]], []]
        elif line.strip():
            paragraphs[-1].append(line)
        else:
            paragraphs.append([])
    found: list[str] = []
    for paragraph in paragraphs:
        flat = " ".join(" ".join(paragraph).split())
        found += [part for part in re.split(r"(?<=[.!?]) ", flat) if part.strip()]
    return [s.strip() for s in found]


def pick(sentences: list[str], wanted: int) -> list[str]:
    if len(sentences) <= wanted:
        return sentences
    terms = [[t for t in TERM.findall(s.lower()) if t not in COMMON] for s in sentences]
    weight: dict[str, int] = {}
    for ts in terms:
        for t in ts:
            weight[t] = weight.get(t, 0) + 1
    score = [sum(weight[t] for t in ts) / math.sqrt(len(ts)) if ts else 0.0 for ts in terms]
    chosen = sorted(sorted(range(len(sentences)), key=lambda i: (-score[i], i))[:wanted])
    return [sentences[i] for i in chosen]


class SummarizeNote(BaseSkill[SummarizeNoteInput, SummarizeNoteOutput]):
    name = "summarize_note"
    description = "Summarize a vault note in a few sentences."
    input_model = SummarizeNoteInput
    output_model = SummarizeNoteOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SummarizeNoteInput) -> SummarizeNoteOutput:
        if not 1 <= input_data.max_sentences <= 20:
            raise ValueError("max_sentences must be between 1 and 20")
        if not input_data.path:
            raise ValueError("a path is needed")
        text = self.vault.read_text(input_data.path)
        sentences = sentences_of(text)
        if self.llm.can_complete():
            try:
                answer = " ".join(self.llm.complete(
                    f"Summarize in at most {input_data.max_sentences} sentences:\n\n" + "\n".join(sentences)).split())
            except Exception:
                answer = ""
            if answer:
                return SummarizeNoteOutput(summary=answer, sentences=len(sentences_of(answer)), method="model",
                                           path=input_data.path)
        kept = pick(sentences, input_data.max_sentences)
        return SummarizeNoteOutput(summary=" ".join(kept), sentences=len(kept), method="extractive",
                                   path=input_data.path)
