"""BM25 search over the vault's notes, blended with embeddings when offered (written independently from the spec)."""

import math
import re
from typing import Any

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

TOKEN = re.compile(r"[a-z0-9]+")
K1, B = 1.5, 0.75


class SearchNotesInput(BaseModel):
    query: str
    limit: int = 5


class SearchNotesOutput(BaseModel):
    results: list[dict[str, Any]]
    paths: list[str]
    count: int
    method: str


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def parse_note(path: str, text: str) -> tuple[str, str, str]:
    """(shown title, ranked title, body): the body is what follows the front matter; the title is the front matter's,
    else the first '# ' heading; a note with neither shows its file name, and has no title words to rank."""
    title, body = "", text
    if text.startswith("---\n"):
        close = text.find("\n---", 4)
        if close >= 0:
            for line in text[4:close].split("\n"):
                key, sep, value = line.partition(":")
                if sep and key.strip() == "title":
                    title = value.strip().strip("\"'")
            body = text[close + 4 :]
    if not title:
        heading = re.search(r"^#\s+(.+?)\s*$", body, re.MULTILINE)
        title = heading.group(1) if heading else ""
    return title or path.split("/")[-1].removesuffix(".md"), title, body


def term_counts(title: str, body: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in tokens(title) + tokens(title) + tokens(body):  # the title counts twice
        counts[word] = counts.get(word, 0) + 1
    return counts


def cosine(u: list[float], v: list[float]) -> float:
    norm = math.sqrt(sum(a * a for a in u)) * math.sqrt(sum(b * b for b in v))
    return sum(a * b for a, b in zip(u, v, strict=False)) / norm if norm else 0.0


class SearchNotes(BaseSkill[SearchNotesInput, SearchNotesOutput]):
    name = "search_notes"
    description = "Rank the vault's notes for a query."
    input_model = SearchNotesInput
    output_model = SearchNotesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SearchNotesInput) -> SearchNotesOutput:
        if not 1 <= len(input_data.query) <= 1000:
            raise ValueError("the query must hold 1 to 1000 characters")
        if not 1 <= input_data.limit <= 100:
            raise ValueError("limit must be between 1 and 100")
        paths = sorted(self.vault.list_files("**/*.md"))
        notes = [parse_note(p, self.vault.read_text(p)) for p in paths]
        counts = [term_counts(ranked, body) for _, ranked, body in notes]
        lengths = [sum(c.values()) for c in counts]
        total = len(notes)
        average = sum(lengths) / total if total else 0.0
        query = set(tokens(input_data.query))
        frequency = {w: sum(1 for c in counts if w in c) for w in query}
        scores: dict[int, float] = {}
        for i, c in enumerate(counts):
            score = 0.0
            for w in query:
                tf = c.get(w, 0)
                if tf:
                    idf = math.log(1 + (total - frequency[w] + 0.5) / (frequency[w] + 0.5))
                    denominator = tf + K1 * (1 - B + B * lengths[i] / average) if average else tf + K1
                    score += idf * tf * (K1 + 1) / denominator
            if score > 0:
                scores[i] = score
        method = "lexical"
        if scores and self.llm.can_embed():
            order = sorted(scores)
            vectors = self.llm.embed([input_data.query] + [notes[i][0] + "\n" + notes[i][2] for i in order])
            best = max(scores.values())
            for i, vector in zip(order, vectors[1:], strict=True):
                scores[i] = 0.5 * scores[i] / best + 0.5 * cosine(vectors[0], vector)
            method = "hybrid"
        ranked = sorted(scores, key=lambda i: (-scores[i], paths[i]))
        results = []
        for i in ranked:
            snippet = next((line.strip()[:160] for line in notes[i][2].splitlines() if query & set(tokens(line))), "")
            results.append({"path": paths[i], "title": notes[i][0], "score": round(scores[i], 4), "snippet": snippet})
        kept = results[: input_data.limit]
        return SearchNotesOutput(results=kept, paths=[r["path"] for r in kept], count=len(results), method=method)
