"""What search reads and answers: a skill or proposal as a document (its passage for the embedder, its fields for
BM25), a query, a hit, and how a proposal's fields differ from a hit's."""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kavi.proposals.model import Proposal

MAX_QUERY_CHARS = 1000  # a query from a person or an agent
MAX_SPEC_QUERY_CHARS = 6000  # a proposal used as the query (its description alone may hold 4000)
MAX_EXAMPLES_CHARS = 2000  # what of a spec's examples is indexed: enough for their words, not their bulk
MAX_PASSAGE_CHARS = 1200  # what of a skill is embedded: its name, description and fields
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class SearchError(ValueError):
    """A query that cannot be run (empty, too long), said in one line."""



@dataclass(frozen=True)
class Doc:
    """One searchable thing: the latest trusted version of a skill, or a proposal that is not trusted yet."""

    kind: str  # "skill" or "proposal"
    name: str
    version: int | None
    side_effect_class: str
    description: str
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    examples_text: str = ""
    field_text: str = ""

    @property
    def doc_id(self) -> str:
        return f"{self.kind}:{self.name}"

    @property
    def name_text(self) -> str:
        return self.name.replace("_", " ")

    @property
    def schema_text(self) -> str:
        ins = " ".join(f"{n} {t}" for n, t in self.inputs)
        outs = " ".join(f"{n} {t}" for n, t in self.outputs)
        return f"inputs {ins} outputs {outs} {self.field_text}".strip()

    @property
    def text(self) -> str:
        """The document as one query (its self-match)."""
        return " ".join(x for x in (self.name_text, self.description, self.schema_text, self.examples_text) if x)

    @property
    def passage(self) -> str:
        """What is embedded: the task in words first, then the name and the fields (never the examples: their
        values say little of the task and cost the encoder most)."""
        fields = ", ".join(n.replace("_", " ") for n, _ in (*self.inputs, *self.outputs))
        text = f"{self.description.strip()} ({self.name_text}; {fields})" if fields else \
            f"{self.description.strip()} ({self.name_text})"
        return " ".join(text.split())[:MAX_PASSAGE_CHARS]

    @classmethod
    def from_spec(cls, kind: str, spec: Mapping[str, Any], version: int | None = None) -> "Doc":
        def fields(key: str) -> tuple[tuple[str, str], ...]:
            return tuple((str(f.get("name", "")), str(f.get("type", ""))) for f in spec.get(key) or []
                         if isinstance(f, Mapping))

        described = " ".join(str(f.get("description") or "") for key in ("inputs", "outputs")
                             for f in spec.get(key) or [] if isinstance(f, Mapping))
        examples = [{"input": e.get("input"), "expected": e.get("expected")} for e in (spec.get("examples") or [])[:3]
                    if isinstance(e, Mapping)]
        return cls(kind=kind, name=str(spec.get("name", "")), version=version,
                   side_effect_class=str(spec.get("side_effect_class", "")),
                   description=str(spec.get("description", "")), inputs=fields("inputs"), outputs=fields("outputs"),
                   examples_text=json.dumps(examples, ensure_ascii=False, default=str)[:MAX_EXAMPLES_CHARS],
                   field_text=described.strip())

    @classmethod
    def from_proposal(cls, proposal: Proposal) -> "Doc":
        return cls.from_spec("proposal", proposal.model_dump(mode="json"))


@dataclass(frozen=True)
class Query:
    """What a search looks for: the text BM25 reads and the text the embedder encodes as a query (a proposal's
    passage, so a proposal and a skill are encoded alike; a person's words as they are)."""

    text: str
    semantic: str


@dataclass(frozen=True)
class Hit:
    kind: str
    name: str
    version: int | None
    side_effect_class: str
    description: str
    score: float  # 0..1 (see the module's note)
    bm25: float
    similarity: float | None  # the raw cosine similarity (None without embeddings)
    inputs: tuple[tuple[str, str], ...] = ()
    outputs: tuple[tuple[str, str], ...] = ()
    reason: str | None = None  # the model's, when it re-ranked the results

    @property
    def ref(self) -> str:
        return self.name if self.version is None else f"{self.name}@{self.version}"

    def to_dict(self) -> dict[str, Any]:
        out = {"kind": self.kind, "name": self.name, "version": self.version, "score": round(self.score, 4),
               "bm25": round(self.bm25, 4),
               "similarity": None if self.similarity is None else round(self.similarity, 4),
               "side_effect_class": self.side_effect_class, "description": self.description,
               "inputs": {n: t for n, t in self.inputs}, "outputs": {n: t for n, t in self.outputs}}
        if self.reason is not None:
            out["reason"] = self.reason
        return out


def clean_query(text: str, limit: int = MAX_QUERY_CHARS) -> str:
    """A query as the index sees it: control characters out, whitespace collapsed, bounded in length."""
    if not isinstance(text, str):
        raise SearchError("the query must be text")
    if len(text) > limit:
        raise SearchError(f"the query is {len(text)} characters long; at most {limit} are allowed")
    cleaned = " ".join(_CONTROL.sub(" ", text).split())
    if not cleaned:
        raise SearchError("the query is empty")
    return cleaned



def spec_query(proposal: Proposal | Mapping[str, Any]) -> Query:
    """A proposal as a query: its name, description, fields and examples for BM25 (as the index holds a skill),
    its passage for the embedder."""
    spec = proposal.model_dump(mode="json") if isinstance(proposal, Proposal) else proposal
    doc = Doc.from_spec("proposal", spec)
    return Query(clean_query(doc.text[:MAX_SPEC_QUERY_CHARS], MAX_SPEC_QUERY_CHARS), doc.passage or doc.name_text)


def schema_difference(proposal: Proposal, hit: Hit) -> str:
    """How a proposal's fields differ from a trusted skill's: what only one has, and what changed type."""
    parts: list[str] = []
    for label, mine, theirs in (("inputs", [(f.name, f.type) for f in proposal.inputs], hit.inputs),
                                ("outputs", [(f.name, f.type) for f in proposal.outputs], hit.outputs)):
        a, b = dict(mine), dict(theirs)
        only_a = sorted(set(a) - set(b))
        only_b = sorted(set(b) - set(a))
        retyped = sorted(n for n in set(a) & set(b) if a[n] != b[n])
        bits = []
        if only_a:
            bits.append("only the proposal has " + ", ".join(f"{n}: {a[n]}" for n in only_a))
        if only_b:
            bits.append(f"only {hit.name} has " + ", ".join(f"{n}: {b[n]}" for n in only_b))
        if retyped:
            bits.append("different types for " + ", ".join(f"{n} ({a[n]} vs {b[n]})" for n in retyped))
        parts.append(f"{label}: " + ("; ".join(bits) if bits else "same fields and types"))
    if proposal.side_effect_class.value != hit.side_effect_class:
        parts.append(f"class: {proposal.side_effect_class.value} vs {hit.side_effect_class}")
    return "; ".join(parts)




