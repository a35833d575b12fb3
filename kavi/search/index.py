"""The search index: trusted skills and proposals in a derived DuckDB file, ranked by BM25 (the `fts` extension)
and, when an embedding endpoint is configured, by cosine similarity too (the `vss` extension's HNSW index).

The file is derived from the ledger and rebuilt whole when the ledger's trusted set or its proposals change (a
few milliseconds for hundreds of skills): it is never a second source of truth, and deleting it loses nothing.
It is written to a temporary file and renamed into place, so a reader sees the old index or the new one.

Ranking is by BM25 (with embeddings: reciprocal rank fusion of the BM25 and the cosine rankings).

Scores. BM25 is unbounded and depends on the corpus, so a threshold on it would mean nothing. Every document's
BM25 score is divided by the score its own text gets as a query (its self-match, stored at build time): `score`
1.0 means "matches this skill as well as the skill's own name, description, schema and examples do", 0 means no
shared term. Values above 1 happen (a query repeating the skill's rarest terms) and are capped at 1. With
embeddings the score is the mean of that and the cosine similarity (clipped at 0), still on 0..1.
"""

import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.proposals.model import Proposal
from kavi.search.extensions import load_extension
from kavi.settings import DEFAULT_DUPLICATE_SCORE, KaviSettings, load_settings

INDEX_FORMAT = 1
MAX_QUERY_CHARS = 1000  # a query from a person or an agent
MAX_SPEC_QUERY_CHARS = 6000  # a proposal used as the query (its description alone may hold 4000)
MAX_RESULTS = 50
RRF_K = 60  # the usual constant of reciprocal rank fusion
MAX_EXAMPLES_CHARS = 2000  # what of a spec's examples is indexed: enough for their words, not their bulk
# The near-copy threshold, DEFAULT_DUPLICATE_SCORE, lives with the settings (the README gives the scores it was
# chosen from); a warning starts at half of it.
__all__ = ["DEFAULT_DUPLICATE_SCORE"]
# BM25 per field, weighted: a word of the name or the description says more about what a skill does than a word
# of its examples (a URL in an example made every query with "url" in it find the HTTP skill).
FIELD_WEIGHTS = {"name_text": 3.0, "description": 2.0, "schema_text": 1.0, "examples_text": 0.25}
KINDS = ("skill", "proposal")  # one table and one BM25 index each: proposals do not move the skills' statistics


BM25_K1, BM25_B = 1.2, 0.75  # the fts extension's defaults


def _bm25_sql(kind: str, *, query: bool) -> str:
    """Weighted BM25 of every document of a kind in one statement, over the fts extension's own index tables
    (its tokenizer, stemmer, dictionary and statistics) with match_bm25's formula: the sum over fields of the
    field's weight times match_bm25(..., fields := that field). One pass instead of one macro call per field (per
    document, for the self-match).

    With `query` the terms are those of the bound query text; without, every term of each document: its
    self-match, the score its own text gets as a query."""
    s = f"fts_main_docs_{kind}"
    weights = ", ".join(f"('{f}', {w})" for f, w in FIELD_WEIGHTS.items())
    if query:
        terms = (f"tokens AS (SELECT DISTINCT stem(unnest({s}.tokenize(?)), 'porter') AS t), "
                 f"qterms AS (SELECT te.docid, te.fieldid, te.termid FROM {s}.terms te JOIN {s}.dict di "
                 "ON di.termid = te.termid JOIN tokens ON di.term = tokens.t), ")
    else:
        terms = f"qterms AS (SELECT docid, fieldid, termid FROM {s}.terms), "
    return (
        f"WITH {terms}"
        "tf AS (SELECT docid, fieldid, termid, count(*) AS tf FROM qterms GROUP BY docid, fieldid, termid), "
        f"weights(field, weight) AS (VALUES {weights}), "
        f"st AS (SELECT num_docs, avgdl FROM {s}.stats) "
        "SELECT docs.name, sum(w.weight * log(((st.num_docs - dict.df) + 0.5) / (dict.df + 0.5) + 1) "
        f"* (tf.tf * ({BM25_K1} + 1) / (tf.tf + {BM25_K1} * ((1 - {BM25_B}) + {BM25_B} * (docs.len / st.avgdl))))) "
        f"FROM tf JOIN {s}.docs docs ON docs.docid = tf.docid JOIN {s}.dict dict ON dict.termid = tf.termid "
        f"JOIN {s}.fields f ON f.fieldid = tf.fieldid JOIN weights w ON w.field = f.field CROSS JOIN st "
        "GROUP BY docs.name"
    )


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class SearchError(ValueError):
    """A query that cannot be run (empty, too long), said in one line."""


@dataclass(frozen=True)
class SearchConfig:
    """KAVI_SEARCH_DUPLICATE_SCORE (0..1, see the module's note on scores) and the optional embedding endpoint:
    KAVI_EMBEDDINGS_URL (an OpenAI-compatible base URL, `/embeddings` is appended) and KAVI_EMBEDDINGS_MODEL."""

    duplicate_score: float = DEFAULT_DUPLICATE_SCORE
    embeddings_url: str | None = None
    embeddings_model: str | None = None
    timeout_s: float = 30.0

    @classmethod
    def from_settings(cls, settings: KaviSettings) -> "SearchConfig":
        """The search settings (checked by the settings: a score from 0 to 1, an http(s) URL with its model)."""
        return cls(settings.search_duplicate_score, settings.embeddings_url, settings.embeddings_model)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "SearchConfig":
        """The search settings of a mapping of variables (None: of the environment, read by kavi.settings)."""
        return cls.from_settings(load_settings(environ))

    @property
    def mode(self) -> str:
        return "bm25+vector" if self.embeddings_url else "bm25"

    @property
    def tag(self) -> str:
        """What of the configuration the index depends on (a different embedding model means a rebuild)."""
        return f"{self.embeddings_url or ''}|{self.embeddings_model or ''}"


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
        """The document as one query (its self-match), and what an embedding is made of."""
        return " ".join(x for x in (self.name_text, self.description, self.schema_text, self.examples_text) if x)

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
class Hit:
    kind: str
    name: str
    version: int | None
    side_effect_class: str
    description: str
    score: float  # 0..1 (see the module's note)
    bm25: float
    similarity: float | None
    inputs: tuple[tuple[str, str], ...] = ()
    outputs: tuple[tuple[str, str], ...] = ()

    @property
    def ref(self) -> str:
        return self.name if self.version is None else f"{self.name}@{self.version}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "version": self.version, "score": round(self.score, 4),
                "bm25": round(self.bm25, 4),
                "similarity": None if self.similarity is None else round(self.similarity, 4),
                "side_effect_class": self.side_effect_class, "description": self.description,
                "inputs": {n: t for n, t in self.inputs}, "outputs": {n: t for n, t in self.outputs}}


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


def ledger_docs(records: ForgeRecords) -> tuple[tuple[Any, ...], list[Doc]]:
    """The ledger's signature for the index (it moves when a version is promoted or revoked, or a proposal is
    recorded or revised) and the documents: the latest trusted version of each skill, and each proposal with no
    trusted version."""
    with records.session(), records.ledger.connect() as con:
        mark = records.registry_mark()
        latest = {t.name: t for t in records.trusted_versions()}
        prop = con.execute("SELECT count(*), coalesce(sum(coalesce(revision, 1)), 0), "
                           "coalesce(CAST(max(updated_at) AS VARCHAR), '') FROM proposals").fetchone()
        specs = con.execute("SELECT name, spec_json FROM proposals ORDER BY name").fetchall()
        revs = con.execute("SELECT name, revision, spec_json FROM proposal_revisions").fetchall()
    by_rev = {(r[0], int(r[1])): r[2] for r in revs}
    docs: list[Doc] = []
    for name, spec_json in specs:
        t = latest.get(name)
        if t is not None:
            raw = by_rev.get((name, t.spec_revision or 0), spec_json)
            docs.append(Doc.from_spec("skill", json.loads(raw), t.version))
        else:
            docs.append(Doc.from_spec("proposal", json.loads(spec_json)))
    return (INDEX_FORMAT, *mark, *(prop or ())), docs


Embedder = Any  # a callable: list of texts -> list of vectors (kavi.search.embeddings.HttpEmbedder)


@dataclass
class SearchIndex:
    """The derived index file of a skills home; `search` rebuilds it first when the ledger moved."""

    home: KaviHome
    records: ForgeRecords
    config: SearchConfig = field(default_factory=SearchConfig)
    embedder: Embedder | None = None
    rebuilds: int = 0

    @property
    def path(self) -> Path:
        return self.home.root / "search.duckdb"

    @property
    def mode(self) -> str:
        return self.config.mode

    def _signature_text(self, signature: tuple[Any, ...]) -> str:
        return json.dumps([*signature, self.config.tag], default=str)

    def _stored_signature(self) -> str | None:
        if not self.path.exists():
            return None
        try:
            con = duckdb.connect(str(self.path), read_only=True)
        except duckdb.Error:
            return None
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'signature'").fetchone()
        except duckdb.Error:
            return None
        finally:
            con.close()
        return str(row[0]) if row else None

    def ensure(self) -> bool:
        """Rebuild the index if the ledger moved since it was built; True when it was rebuilt."""
        signature, docs = ledger_docs(self.records)
        wanted = self._signature_text(signature)
        if self._stored_signature() == wanted:
            return False
        self._build(docs, wanted)
        return True

    def _build(self, docs: Sequence[Doc], signature: str) -> None:
        self.home.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.home.root, prefix=".search-", suffix=".duckdb")
        os.close(fd)
        os.unlink(tmp)  # DuckDB creates the file itself
        try:
            con = duckdb.connect(tmp)
            try:
                self._fill(con, docs, signature)
                con.execute("CHECKPOINT")
            finally:
                con.close()
            os.replace(tmp, self.path)
        finally:
            for leftover in (Path(tmp), Path(tmp + ".wal")):
                leftover.unlink(missing_ok=True)
        self.rebuilds += 1

    def _fill(self, con: duckdb.DuckDBPyConnection, docs: Sequence[Doc], signature: str) -> None:
        load_extension(con, "fts")
        con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        for kind in KINDS:
            table = f"docs_{kind}"
            mine = [d for d in docs if d.kind == kind]
            con.execute(f"CREATE TABLE {table} (doc_id VARCHAR PRIMARY KEY, kind VARCHAR, name VARCHAR, "
                        "version INTEGER, side_effect_class VARCHAR, name_text VARCHAR, description VARCHAR, "
                        "schema_text VARCHAR, examples_text VARCHAR, inputs_json VARCHAR, outputs_json VARCHAR, "
                        "self_score DOUBLE)")
            if not mine:
                continue
            con.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                            [[d.doc_id, d.kind, d.name, d.version, d.side_effect_class, d.name_text, d.description,
                              d.schema_text, d.examples_text, json.dumps(d.inputs), json.dumps(d.outputs)]
                             for d in mine])
            con.execute(f"PRAGMA create_fts_index('{table}', 'doc_id', 'name_text', 'description', 'schema_text', "
                        "'examples_text', stemmer = 'porter', stopwords = 'english', overwrite = 1)")
            selfs = con.execute(_bm25_sql(kind, query=False)).fetchall()
            con.executemany(f"UPDATE {table} SET self_score = ? WHERE doc_id = ?", [[r[1], r[0]] for r in selfs])
        con.execute("INSERT INTO meta VALUES ('signature', ?), ('mode', ?), ('count', ?)",
                    [signature, self.mode, str(len(docs))])
        if self.embedder is not None and docs:
            self._fill_vectors(con, docs)

    def _fill_vectors(self, con: duckdb.DuckDBPyConnection, docs: Sequence[Doc]) -> None:
        vectors = self.embedder([d.text for d in docs]) if self.embedder is not None else []
        dim = len(vectors[0])
        load_extension(con, "vss")
        con.execute("SET hnsw_enable_experimental_persistence = true")
        con.execute(f"CREATE TABLE vecs (doc_id VARCHAR PRIMARY KEY, vec FLOAT[{dim}])")
        con.executemany("INSERT INTO vecs VALUES (?, ?)", [[d.doc_id, v] for d, v in zip(docs, vectors, strict=True)])
        con.execute("CREATE INDEX vecs_hnsw ON vecs USING HNSW (vec) WITH (metric = 'cosine')")
        con.execute("INSERT INTO meta VALUES ('dim', ?)", [str(dim)])

    def search(self, query: str, *, kinds: Sequence[str] = ("skill",), limit: int = 10,
               exclude: Sequence[str] = (), _limit_chars: int = MAX_QUERY_CHARS) -> list[Hit]:
        """The best `limit` documents of the given kinds for `query`, best first; only those sharing a term with
        it (or, with embeddings, every document, ranked by the combined score)."""
        text = clean_query(query, _limit_chars)
        self.ensure()
        return self.query(text, kinds=kinds, limit=limit, exclude=exclude)

    def build(self, docs: Sequence[Doc], label: str) -> None:
        """Build the index from `docs` rather than the ledger (a benchmark's corpus); `search` would rebuild it
        from the ledger, `query` uses it as it is."""
        self._build(docs, label)

    def query(self, text: str, *, kinds: Sequence[str] = ("skill",), limit: int = 10,
              exclude: Sequence[str] = ()) -> list[Hit]:
        """`search` on the index as it stands (`text` already cleaned and bounded)."""
        limit = max(1, min(int(limit), MAX_RESULTS))
        qvec = self.embedder([text])[0] if self.embedder is not None else None
        con = duckdb.connect(str(self.path), read_only=True)
        try:
            load_extension(con, "fts")
            rows = []
            for kind in (k for k in KINDS if k in kinds):
                count = con.execute(f"SELECT count(*) FROM docs_{kind}").fetchone()
                if count and count[0]:
                    rows += con.execute(
                        f"WITH scores AS ({_bm25_sql(kind, query=True)}) "
                        "SELECT kind, name, version, side_effect_class, description, inputs_json, outputs_json, "
                        f"self_score, s.score, doc_id FROM docs_{kind} d LEFT JOIN scores s(doc, score) "
                        "ON s.doc = d.doc_id", [text]).fetchall()
            if not rows:
                return []
            sims: dict[str, float] = {}
            if qvec is not None:
                load_extension(con, "vss")
                dim_row = con.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
                dim = int(dim_row[0]) if dim_row else len(qvec)
                if len(qvec) != dim:
                    raise SearchError(f"the embedding endpoint returned {len(qvec)} dimensions for the query; the "
                                      f"index holds {dim}: delete {self.path.name} to rebuild it")
                rows_v = con.execute(
                    f"SELECT doc_id, array_cosine_similarity(vec, ?::FLOAT[{dim}]) FROM vecs "
                    f"ORDER BY array_cosine_distance(vec, ?::FLOAT[{dim}]) LIMIT {MAX_RESULTS}",
                    [qvec, qvec]).fetchall()
                sims = {str(r[0]): float(r[1]) for r in rows_v}
        finally:
            con.close()
        hits: list[Hit] = []
        for kind, name, version, sec, desc, ins, outs, self_score, bm25, doc_id in rows:
            if kind not in kinds or name in exclude:
                continue
            sim = sims.get(doc_id) if qvec is not None else None
            if not bm25 and sim is None:
                continue
            raw = float(bm25 or 0.0)
            lexical = min(1.0, raw / self_score) if self_score else 0.0
            score = lexical if qvec is None else (lexical + max(0.0, sim or 0.0)) / 2
            hits.append(Hit(kind, name, version, sec, desc, score, raw, sim,
                            tuple(tuple(x) for x in json.loads(ins)), tuple(tuple(x) for x in json.loads(outs))))
        if qvec is None:
            # BM25 itself ranks (its length normalisation is what ranking needs); `score` says how close.
            hits.sort(key=lambda h: (-h.bm25, -h.score, h.name))
        else:
            # Reciprocal rank fusion of the lexical and the vector ranking: neither scale has to match the other.
            lex = {h.name: i for i, h in enumerate(sorted(hits, key=lambda h: (-h.bm25, h.name)))}
            vec = {h.name: i for i, h in enumerate(sorted(hits, key=lambda h: (-(h.similarity or 0.0), h.name)))}
            hits.sort(key=lambda h: (-(1 / (RRF_K + lex[h.name]) + 1 / (RRF_K + vec[h.name])), h.name))
        return hits[:limit]

    def close_to(self, proposal: Proposal, limit: int = 3) -> list[Hit]:
        """Trusted skills close to a proposal (its own name excluded: re-proposing a skill revises it)."""
        return self.search(spec_query(proposal), limit=limit, exclude=(proposal.name,),
                           _limit_chars=MAX_SPEC_QUERY_CHARS)


def spec_query(proposal: Proposal | Mapping[str, Any]) -> str:
    """A proposal as a query: its name, description, fields and examples, as the index holds a skill."""
    spec = proposal.model_dump(mode="json") if isinstance(proposal, Proposal) else proposal
    return clean_query(Doc.from_spec("proposal", spec).text[:MAX_SPEC_QUERY_CHARS], MAX_SPEC_QUERY_CHARS)


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


def open_index(home: KaviHome, records: ForgeRecords, config: SearchConfig | None = None) -> SearchIndex:
    """The home's index with the configured embedder (none without KAVI_EMBEDDINGS_URL: BM25 only)."""
    cfg = config or SearchConfig.from_env()
    embedder = None
    if cfg.embeddings_url:
        from kavi.search.embeddings import HttpEmbedder

        embedder = HttpEmbedder(cfg.embeddings_url, cfg.embeddings_model or "", timeout_s=cfg.timeout_s)
    return SearchIndex(home, records, cfg, embedder)
