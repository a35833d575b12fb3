"""Rank the vault's notes for a query: BM25 always, blended with embeddings when the model offers them."""

import math
import re
from collections import Counter

from pydantic import BaseModel, Field

from kavi_assets.skills.base import BaseSkill, SideEffectClass

WORD = re.compile(r"[a-z0-9]+")
HEADING = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)
K1 = 1.5
B = 0.75


class SearchNotesInput(BaseModel):
    query: str = Field(min_length=1, max_length=1000)
    limit: int = Field(default=5, ge=1, le=100)


class Hit(BaseModel):
    path: str
    title: str
    score: float
    snippet: str


class SearchNotesOutput(BaseModel):
    results: list[Hit]
    paths: list[str]
    count: int
    method: str


class Note:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        title = ""
        body = text
        if text.startswith("---\n") and (end := text.find("\n---", 4)) != -1:
            for line in text[4:end].splitlines():
                key, _, value = line.partition(":")
                if key.strip() == "title":
                    title = value.strip().strip("\"'")
            body = text[end + 4 :]
        if not title and (heading := HEADING.search(body)):
            title = heading.group(1)
        self.title = title or path.rsplit("/", 1)[-1].removesuffix(".md")
        self.body = body
        self.terms = Counter(words(title) * 2 + words(body))
        self.length = sum(self.terms.values())

    def snippet(self, query_words: set[str]) -> str:
        for line in self.body.splitlines():
            if query_words & set(words(line)):
                return line.strip()[:160]
        return ""


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def bm25(notes: list[Note], query: list[str]) -> list[float]:
    n = len(notes)
    avg = sum(note.length for note in notes) / n if n else 0.0
    scores = []
    for note in notes:
        score = 0.0
        for term in set(query):
            tf = note.terms.get(term, 0)
            if not tf:
                continue
            df = sum(1 for other in notes if term in other.terms)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            norm = tf + K1 * (1 - B + B * note.length / avg) if avg else tf + K1
            score += idf * tf * (K1 + 1) / norm
        scores.append(score)
    return scores


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


class SearchNotes(BaseSkill[SearchNotesInput, SearchNotesOutput]):
    name = "search_notes"
    description = "Search the vault's notes for a query, best first."
    input_model = SearchNotesInput
    output_model = SearchNotesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SearchNotesInput) -> SearchNotesOutput:
        notes = [Note(p, self.vault.read_text(p)) for p in sorted(self.vault.list_files("**/*.md"))]
        query = words(input_data.query)
        scores = bm25(notes, query)
        method = "lexical"
        matched = [i for i, s in enumerate(scores) if s > 0]
        if matched and self.llm.can_embed():
            texts = [notes[i].title + "\n" + notes[i].body for i in matched]
            vectors = self.llm.embed([input_data.query, *texts])
            top = max(scores[i] for i in matched)
            for i, vec in zip(matched, vectors[1:], strict=True):
                scores[i] = 0.5 * scores[i] / top + 0.5 * cosine(vectors[0], vec)
            method = "hybrid"
        ranked = sorted(matched, key=lambda i: (-scores[i], notes[i].path))
        hits = [
            Hit(path=notes[i].path, title=notes[i].title, score=round(scores[i], 4),
                snippet=notes[i].snippet(set(query)))
            for i in ranked
        ]
        kept = hits[: input_data.limit]
        return SearchNotesOutput(results=kept, paths=[h.path for h in kept], count=len(hits), method=method)
