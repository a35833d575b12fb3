"""Summarize a vault note: with the model when one is configured, extractively (deterministic) otherwise."""

import math
import re
from collections import Counter

from pydantic import BaseModel, Field

from kavi_assets.skills.base import BaseSkill, SideEffectClass

WORD = re.compile(r"[a-z0-9]+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
HEADING = re.compile(r"^\s*#{1,6}\s")
MARKUP = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "had", "has", "have", "he",
    "her", "his", "i", "in", "is", "it", "its", "of", "on", "or", "our", "she", "so", "that", "the",
    "their", "them", "they", "this", "to", "was", "we", "were", "what", "when", "which", "who", "will",
    "with", "you", "your",
})


class SummarizeNoteInput(BaseModel):
    path: str = Field(min_length=1)
    max_sentences: int = Field(default=3, ge=1, le=20)


class SummarizeNoteOutput(BaseModel):
    summary: str
    sentences: int
    method: str
    path: str


def body_of(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            text = text[end + 4 :]
    lines = []
    for line in text.splitlines():
        if HEADING.match(line):
            continue
        if MARKUP.match(line):
            lines += ["", MARKUP.sub("", line), ""]  # a list item is a sentence of its own
        else:
            lines.append(line)
    return "\n".join(lines)


def split_sentences(body: str) -> list[str]:
    found: list[str] = []
    for block in re.split(r"\n\s*\n", body):
        flat = " ".join(block.split())
        found.extend(s.strip() for s in SENTENCE_END.split(flat) if s.strip())
    return found


def extractive(body: str, limit: int) -> list[str]:
    sentences = split_sentences(body)
    if len(sentences) <= limit:
        return sentences
    words = [[w for w in WORD.findall(s.lower()) if w not in STOPWORDS] for s in sentences]
    freq = Counter(w for ws in words for w in ws)
    scores = [sum(freq[w] for w in ws) / math.sqrt(len(ws)) if ws else 0.0 for ws in words]
    best = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))[:limit]
    return [sentences[i] for i in sorted(best)]


class SummarizeNote(BaseSkill[SummarizeNoteInput, SummarizeNoteOutput]):
    name = "summarize_note"
    description = "Summarize a note of the vault in a few sentences."
    input_model = SummarizeNoteInput
    output_model = SummarizeNoteOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SummarizeNoteInput) -> SummarizeNoteOutput:
        body = body_of(self.vault.read_text(input_data.path))
        limit = input_data.max_sentences
        if self.llm.can_complete():
            prompt = f"Summarize this note in at most {limit} sentences. Answer with the summary only.\n\n"
            prompt += body[:8000]
            try:
                text = " ".join(self.llm.complete(prompt, max_tokens=60 * limit).split())
            except Exception:
                text = ""
            if text:
                count = len(split_sentences(text))
                return SummarizeNoteOutput(summary=text, sentences=count, method="model",
                                           path=input_data.path)
        kept = extractive(body, limit)
        return SummarizeNoteOutput(summary=" ".join(kept), sentences=len(kept), method="extractive",
                                   path=input_data.path)
