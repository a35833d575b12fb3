"""The search index: trusted skills and proposals in a derived DuckDB file, ranked by BM25 (the `fts` extension)
and by the cosine similarity of embeddings (the packaged model by default, a configured endpoint when one is set;
vectors in the `vss` extension's HNSW index), the two rankings fused.

The file is derived from the ledger and rebuilt whole when the ledger's trusted set or its proposals change: it is
never a second source of truth, and deleting it loses nothing. It is written to a temporary file and renamed into
place, so a reader sees the old index or the new one. A rebuild takes the vectors the old file holds for the same
passage text and the same model (keyed by their digest) and computes only the new ones.

Scores. With embeddings, `score` is the calibrated cosine similarity of the query and the skill (see
`Calibration`): a statement about meaning that does not depend on how long the skill's text is. With BM25 alone,
it is the BM25 score divided by the score the skill's own text gets as a query (1.0: as close as the skill's own
words), capped at 1; a one-line skill reaches 1.0 easily, which is why the duplicate guard never refuses on a
score alone (kavi.search.same_task).
"""

import hashlib
import itertools
import json
import os
import re
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from kavi.home import KaviHome
from kavi.ledger.attached import sql_string
from kavi.ledger.records import ForgeRecords
from kavi.llm.client import LLMSettings, llm_settings
from kavi.proposals.model import Proposal
from kavi.search.documents import MAX_QUERY_CHARS, Doc, Hit, Query, SearchError, clean_query, spec_query
from kavi.search.embeddings import Embedder
from kavi.search.extensions import load_extension
from kavi.settings import DEFAULT_DUPLICATE_SCORE, KaviSettings, load_settings

INDEX_FORMAT = 3
MAX_RESULTS = 50
# The near-copy threshold, DEFAULT_DUPLICATE_SCORE, lives with the settings (the README gives the scores it was
# chosen from); a warning starts at kavi.search.guard.WARN_FRACTION of it.
__all__ = ["DEFAULT_DUPLICATE_SCORE"]
# BM25 per field, weighted: the description says what a skill does; a name and field names are one person's
# choice of words, and an example's words say least (a URL in an example made every query with "url" find the
# HTTP skill).
FIELD_WEIGHTS = {"description": 3.0, "name_text": 1.5, "schema_text": 0.75, "examples_text": 0.25}
# How much of the fused score is meaning (the rest is words): the vectors read a task, BM25 catches rare exact
# terms (a name, a number).
FUSION_ALPHA = 0.9
# A skill that shares no word with the query is listed only when its meaning is at least this close (on the
# calibrated scale): below it sit the unrelated tasks of any corpus.
MIN_MEANING = 0.3
KINDS = ("skill", "proposal")  # one table and one BM25 index each: proposals do not move the skills' statistics


BM25_K1, BM25_B = 1.2, 0.75  # the fts extension's defaults


def _bm25_terms_sql(kind: str) -> str:
    """Each (term, document) pair's part of a weighted BM25 score, over the fts extension's own index tables (its
    tokenizer, stemmer, dictionary and statistics) with match_bm25's formula: the sum over fields of the field's
    weight times the term's match_bm25 part in that field. Stored at build time (table bm25_<kind>), so a query
    sums the parts of its terms instead of joining the index tables again."""
    s = f"fts_main_docs_{kind}"
    weights = ", ".join(f"('{f}', {w})" for f, w in FIELD_WEIGHTS.items())
    return (
        f"WITH tf AS (SELECT docid, fieldid, termid, count(*) AS tf FROM {s}.terms GROUP BY docid, fieldid, termid), "
        f"weights(field, weight) AS (VALUES {weights}), "
        f"st AS (SELECT num_docs, avgdl FROM {s}.stats) "
        "SELECT dict.term, docs.name AS doc, sum(w.weight * log(((st.num_docs - dict.df) + 0.5) / (dict.df + 0.5) + 1) "
        f"* (tf.tf * ({BM25_K1} + 1) / (tf.tf + {BM25_K1} * ((1 - {BM25_B}) + {BM25_B} * (docs.len / st.avgdl))))) "
        f"AS part FROM tf JOIN {s}.docs docs ON docs.docid = tf.docid JOIN {s}.dict dict ON dict.termid = tf.termid "
        f"JOIN {s}.fields f ON f.fieldid = tf.fieldid JOIN weights w ON w.field = f.field CROSS JOIN st "
        "GROUP BY dict.term, docs.name"
    )


def _bm25_sql(kind: str, *, query: bool) -> str:
    """Weighted BM25 of every document of a kind, (doc, score): with `query` for the terms of the bound query text
    (tokenized and stemmed as the index was), without it each document's self-match, the score its own text gets
    as a query."""
    where = (f"WHERE term IN (SELECT stem(unnest(fts_main_docs_{kind}.tokenize(?)), 'porter')) " if query else "")
    return f"SELECT doc, sum(part) FROM bm25_{kind} {where}GROUP BY doc"


# Numbers and symbols are terms ("a multiple of 11", "30 days", "x % y"): every symbol becomes a token of its own,
# the tokenizer drops only whitespace and punctuation (its default drops everything but letters).
_SYMBOL = re.compile(r"([^\w\s.,;:!?\"'`()\[\]{}])")
FTS_IGNORE = r"""[\s.,;:!?"'`()\[\]{}]+"""


def lexical(text: str) -> str:
    """Text as the BM25 index reads it: underscores split words, each symbol stands alone."""
    return _SYMBOL.sub(r" \1 ", text.replace("_", " "))


@dataclass(frozen=True)
class Calibration:
    """How an embedder's cosine similarities map onto the 0..1 score: `floor` is where unrelated tasks sit (0),
    `ceiling` where the same task in other words sits (1). Each model's cosines sit in a band of their own, so a raw
    value means nothing across models; the packaged model's constants (PACKAGED_CALIBRATION) are measured on the
    development set of benchmarks/search_hit_rate.py (README, "Search"). An endpoint's model is taken as it is (0
    and 1)."""

    floor: float = 0.0
    ceiling: float = 1.0

    def score(self, cosine: float) -> float:
        return min(1.0, max(0.0, (cosine - self.floor) / (self.ceiling - self.floor)))


@dataclass(frozen=True)
class SearchConfig:
    """The search settings: KAVI_SEARCH_DUPLICATE_SCORE (0..1, see the module's note on scores), the embedder
    (KAVI_SEARCH_EMBEDDER: the packaged model, or none for BM25 alone) or a configured endpoint that wins over it
    (KAVI_EMBEDDINGS_URL, KAVI_EMBEDDINGS_MODEL and the query and passage prefixes the model expects).
    `judge`: the model endpoint (KAVI_LLM_*) that judges a close skill described in other words
    (kavi.search.judge), None without one or with KAVI_SEARCH_RERANK off."""

    duplicate_score: float = DEFAULT_DUPLICATE_SCORE
    embeddings_url: str | None = None
    embeddings_model: str | None = None
    timeout_s: float = 30.0
    embedder: str = "packaged"
    query_prefix: str = ""
    passage_prefix: str = ""
    judge: LLMSettings | None = None

    @classmethod
    def from_settings(cls, settings: KaviSettings) -> "SearchConfig":
        """The search settings (checked by the settings: a score from 0 to 1, an http(s) URL with its model)."""
        return cls(settings.search_duplicate_score, settings.embeddings_url, settings.embeddings_model,
                   embedder=settings.search_embedder, query_prefix=settings.embeddings_query_prefix,
                   passage_prefix=settings.embeddings_passage_prefix,
                   judge=llm_settings(settings) if settings.search_rerank else None)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "SearchConfig":
        """The search settings of a mapping of variables (None: of the environment, read by kavi.settings)."""
        return cls.from_settings(load_settings(environ))

    @property
    def tag(self) -> str:
        """What of the configuration the index depends on (another embedder means a rebuild)."""
        return f"{self.embeddings_url or ''}|{self.embeddings_model or ''}|{self.embedder}|{self.query_prefix}|" \
               f"{self.passage_prefix}"


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


# Index files are attached to one in-memory DuckDB database per process, with the fts and vss extensions loaded into
# it once: a DuckDB of its own per index opened would be built and would load the extensions again, at every build
# and every reader of a rebuilt file (README, figures behind design choices). One read-only attachment per
# index file is kept while the file stays the same; a replaced file is detached before the path is attached again.
# Attaching, detaching and the kept readers go through here, under the lock. Keyed by pid: a forked child builds
# its own.
_readers: dict[tuple[int, Path], tuple[tuple[int, int, int], duckdb.DuckDBPyConnection, str]] = {}
_readers_lock = threading.RLock()
_bases: dict[int, tuple[duckdb.DuckDBPyConnection, set[str]]] = {}
_attachments = itertools.count()


def _database(*extensions: str) -> duckdb.DuckDBPyConnection:
    """This process's DuckDB database, with `extensions` loaded (call with _readers_lock held)."""
    pid = os.getpid()
    if pid not in _bases:
        _bases[pid] = (duckdb.connect(":memory:"), set())
    con, loaded = _bases[pid]
    for name in extensions:
        if name not in loaded:
            load_extension(con, name)
            loaded.add(name)
    return con


def _attach(path: str, *, read_only: bool, extensions: tuple[str, ...]) -> tuple[duckdb.DuckDBPyConnection, str]:
    """A cursor of the process's database with the file at `path` attached and selected, and its alias."""
    base = _database(*extensions)
    alias = f"search_{next(_attachments)}"
    base.execute(f"ATTACH {sql_string(path)} AS {alias}" + (" (READ_ONLY)" if read_only else ""))
    try:
        cur = base.cursor()
        cur.execute(f"USE {alias}")
    except BaseException:
        base.execute(f"DETACH {alias}")
        raise
    return cur, alias


def _detach(cur: duckdb.DuckDBPyConnection, alias: str) -> None:
    cur.close()
    _database().execute(f"DETACH {alias}")


def _reader(path: Path, *, vss: bool) -> duckdb.DuckDBPyConnection:
    """The kept connection to `path` as the file is now (call with _readers_lock held); OSError: no file."""
    stat = path.stat()
    mark = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    kept = _readers.get((os.getpid(), path))
    if kept is None or kept[0] != mark:
        _drop_reader(path)
        cur, alias = _attach(str(path), read_only=True, extensions=("fts",))
        kept = (mark, cur, alias)
        _readers[(os.getpid(), path)] = kept
    if vss:
        _database("vss")
    return kept[1]


def _drop_reader(path: Path) -> None:
    with _readers_lock:
        kept = _readers.pop((os.getpid(), path), None)
        if kept is not None:
            _detach(kept[1], kept[2])


def _vector_text(vector: Sequence[float]) -> str:
    """A vector as one text parameter DuckDB casts to an array: a Python list parameter costs DuckDB a look for
    pandas per element (a failed import each time, when pandas is not installed)."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def _vector_key(model_id: str, passage: str) -> str:
    return hashlib.sha256(f"{model_id}\0{passage}".encode()).hexdigest()


@dataclass
class SearchIndex:
    """The derived index file of a skills home; `search` rebuilds it first when the ledger moved."""

    home: KaviHome
    records: ForgeRecords
    config: SearchConfig = field(default_factory=SearchConfig)
    embedder: Embedder | None = None
    calibration: Calibration = field(default_factory=Calibration)
    note: str | None = None  # why there are no embeddings, when the configuration asked for them
    rebuilds: int = 0
    embedded: int = 0  # passages encoded by the last build (the others were reused)

    @property
    def path(self) -> Path:
        return self.home.root / "search.duckdb"

    @property
    def mode(self) -> str:
        return "bm25+vector" if self.embedder is not None else "bm25"

    @property
    def describe(self) -> str:
        """One line for a person: how the results are ranked."""
        if self.embedder is None:
            return "BM25 only" + (f" ({self.note})" if self.note else "")
        return f"BM25 and meaning ({self.embedder.label}), fused"

    def _signature_text(self, signature: tuple[Any, ...]) -> str:
        model = self.embedder.model_id if self.embedder is not None else ""
        return json.dumps([*signature, self.config.tag, model], default=str)

    def _stored_signature(self) -> str | None:
        try:
            with _readers_lock:
                row = self._reader().execute("SELECT value FROM meta WHERE key = 'signature'").fetchone()
        except (OSError, duckdb.Error):  # no file yet, or one that is not an index: it is rebuilt
            return None
        return str(row[0]) if row else None

    def _stored_vectors(self) -> dict[str, list[float]]:
        """The vectors the current file holds, by key (none when it cannot be read: they are recomputed)."""
        try:
            with _readers_lock:
                rows = _reader(self.path, vss=False).execute("SELECT vkey, vec FROM vecs").fetchall()
        except (OSError, duckdb.Error):
            return {}
        return {str(k): list(v) for k, v in rows}

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
        vectors = self._vectors(docs)
        fd, tmp = tempfile.mkstemp(dir=self.home.root, prefix=".search-", suffix=".duckdb")
        os.close(fd)
        os.unlink(tmp)  # DuckDB creates the file itself
        try:
            # Only attaching and detaching need the lock: the build works in a cursor of its own, so searches of
            # this process go on while it fills the new file.
            with _readers_lock:
                con, alias = _attach(tmp, read_only=False, extensions=("fts", "vss") if vectors else ("fts",))
            try:
                self._fill(con, docs, signature, vectors)
                con.execute("CHECKPOINT")
            finally:
                with _readers_lock:
                    _detach(con, alias)
            with _readers_lock:
                _drop_reader(self.path)
                os.replace(tmp, self.path)
        finally:
            for leftover in (Path(tmp), Path(tmp + ".wal")):
                leftover.unlink(missing_ok=True)
        self.rebuilds += 1

    def _vectors(self, docs: Sequence[Doc]) -> dict[str, tuple[str, list[float]]]:
        """Each document's (key, vector): stored ones reused, the others encoded as passages in one batch."""
        self.embedded = 0
        if self.embedder is None or not docs:
            return {}
        keys = {d.doc_id: _vector_key(self.embedder.model_id, d.passage) for d in docs}
        stored = self._stored_vectors()
        missing = [d for d in docs if keys[d.doc_id] not in stored]
        if missing:
            fresh = self.embedder.passages([d.passage for d in missing])
            if len(fresh) != len(missing):
                raise SearchError(f"the embedder returned {len(fresh)} vectors for {len(missing)} passages")
            stored.update({keys[d.doc_id]: v for d, v in zip(missing, fresh, strict=True)})
            self.embedded = len(missing)
        return {d.doc_id: (keys[d.doc_id], stored[keys[d.doc_id]]) for d in docs}

    def _fill(self, con: duckdb.DuckDBPyConnection, docs: Sequence[Doc], signature: str,
              vectors: Mapping[str, tuple[str, list[float]]]) -> None:
        con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        for kind in KINDS:
            table = f"docs_{kind}"
            mine = [d for d in docs if d.kind == kind]
            con.execute(f"CREATE TABLE {table} (doc_id VARCHAR PRIMARY KEY, kind VARCHAR, name VARCHAR, "
                        "version INTEGER, side_effect_class VARCHAR, name_text VARCHAR, description VARCHAR, "
                        "schema_text VARCHAR, examples_text VARCHAR, inputs_json VARCHAR, outputs_json VARCHAR, "
                        "self_score DOUBLE, shown_description VARCHAR)")
            if not mine:
                continue
            con.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                            [[d.doc_id, d.kind, d.name, d.version, d.side_effect_class, lexical(d.name_text),
                              lexical(d.description), lexical(d.schema_text), lexical(d.examples_text),
                              json.dumps(d.inputs), json.dumps(d.outputs), d.description] for d in mine])
            con.execute(f"PRAGMA create_fts_index('{table}', 'doc_id', 'name_text', 'description', 'schema_text', "
                        f"'examples_text', stemmer = 'porter', stopwords = 'english', "
                        f"ignore = {sql_string(FTS_IGNORE)}, overwrite = 1)")
            con.execute(f"CREATE TABLE bm25_{kind} AS {_bm25_terms_sql(kind)}")
            selfs = con.execute(_bm25_sql(kind, query=False)).fetchall()
            con.executemany(f"UPDATE {table} SET self_score = ? WHERE doc_id = ?", [[r[1], r[0]] for r in selfs])
        con.execute("INSERT INTO meta VALUES ('signature', ?), ('mode', ?), ('count', ?)",
                    [signature, self.mode, str(len(docs))])
        if vectors:
            self._fill_vectors(con, vectors)

    @staticmethod
    def _fill_vectors(con: duckdb.DuckDBPyConnection, vectors: Mapping[str, tuple[str, list[float]]]) -> None:
        dims = {len(v) for _, v in vectors.values()}
        if len(dims) != 1:
            raise SearchError("the embedder's vectors differ in size: delete the search index to rebuild it")
        dim = dims.pop()
        con.execute("SET hnsw_enable_experimental_persistence = true")
        con.execute(f"CREATE TABLE vecs (doc_id VARCHAR PRIMARY KEY, vkey VARCHAR, vec FLOAT[{dim}])")
        items = list(vectors.items())
        con.execute(f"INSERT INTO vecs SELECT unnest(?), unnest(?), unnest(?)::FLOAT[{dim}]",
                    [[doc for doc, _ in items], [k for _, (k, _) in items], [_vector_text(v) for _, (_, v) in items]])
        con.execute("CREATE INDEX vecs_hnsw ON vecs USING HNSW (vec) WITH (metric = 'cosine')")
        con.execute("INSERT INTO meta VALUES ('dim', ?)", [str(dim)])

    def search(self, query: str, *, kinds: Sequence[str] = ("skill",), limit: int = 10,
               exclude: Sequence[str] = ()) -> list[Hit]:
        """The best `limit` documents of the given kinds for a person's `query`, best first."""
        text = clean_query(query, MAX_QUERY_CHARS)
        self.ensure()
        return self.query(Query(text, text), kinds=kinds, limit=limit, exclude=exclude)

    def build(self, docs: Sequence[Doc], label: str) -> None:
        """Build the index from `docs` rather than the ledger (a benchmark's corpus); `search` would rebuild it
        from the ledger, `query` uses it as it is."""
        self._build(docs, label)

    def query(self, q: "Query | str", *, kinds: Sequence[str] = ("skill",), limit: int = 10,
              exclude: Sequence[str] = ()) -> list[Hit]:
        """`search` on the index as it stands (the text already cleaned and bounded). Every document sharing a
        term with the query, and with embeddings the nearest by meaning, ranked by the fused score."""
        if isinstance(q, str):
            q = Query(q, q)
        limit = max(1, min(int(limit), MAX_RESULTS))
        qvec = self.embedder.queries([q.semantic])[0] if self.embedder is not None else None
        with _readers_lock:
            con = self._reader()
            rows = []
            for kind in (k for k in KINDS if k in kinds):
                count = con.execute(f"SELECT count(*) FROM docs_{kind}").fetchone()
                if count and count[0]:
                    rows += con.execute(
                        f"WITH scores AS ({_bm25_sql(kind, query=True)}) "
                        "SELECT kind, name, version, side_effect_class, shown_description, inputs_json, "
                        f"outputs_json, self_score, s.score, doc_id FROM docs_{kind} d LEFT JOIN scores s(doc, "
                        "score) ON s.doc = d.doc_id", [lexical(q.text)]).fetchall()
            sims = self._similarities(con, qvec) if qvec is not None and rows else {}
        return self._rank(rows, sims, qvec is not None, kinds, exclude, limit)

    def _reader(self) -> duckdb.DuckDBPyConnection:
        return _reader(self.path, vss=self.embedder is not None)

    def _similarities(self, con: duckdb.DuckDBPyConnection, qvec: list[float]) -> dict[str, float]:
        """The cosine similarity of the nearest documents (the HNSW index's candidates)."""
        dim_row = con.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
        if dim_row is None:
            return {}
        dim = int(dim_row[0])
        if len(qvec) != dim:
            raise SearchError(f"the embedder returned {len(qvec)} dimensions for the query; the index holds "
                              f"{dim}: delete {self.path.name} to rebuild it")
        vec = _vector_text(qvec)
        rows = con.execute(
            f"SELECT doc_id, array_cosine_similarity(vec, ?::FLOAT[{dim}]) FROM vecs "
            f"ORDER BY array_cosine_distance(vec, ?::FLOAT[{dim}]) LIMIT {MAX_RESULTS * 2}", [vec, vec]).fetchall()
        return {str(r[0]): float(r[1]) for r in rows}

    def _rank(self, rows: list[Any], sims: Mapping[str, float], vectors: bool, kinds: Sequence[str],
              exclude: Sequence[str], limit: int) -> list[Hit]:
        """The best `limit` rows as hits. Without vectors BM25 itself ranks (its length normalisation is what
        ranking needs) and `score` says how close. With vectors, a convex combination of the meaning (the
        similarity on the calibrated scale) and the words (BM25 over this query's best BM25) ranks: ranks alone
        (reciprocal rank fusion) would throw away how far apart two candidates are."""
        cal = self.calibration
        relevant = {doc for doc, sim in sims.items() if cal.score(sim) >= MIN_MEANING}
        kept = [r for r in rows if r[0] in kinds and r[1] not in exclude and (r[8] or r[9] in relevant)]
        top = max((float(r[8] or 0.0) for r in kept), default=0.0) or 1.0

        def order(r: Any) -> tuple[float, str]:
            if not vectors:
                return -float(r[8] or 0.0), r[1]
            sim = sims.get(r[9])
            meaning = (sim - cal.floor) / (cal.ceiling - cal.floor) if sim is not None else 0.0
            return -(FUSION_ALPHA * meaning + (1 - FUSION_ALPHA) * float(r[8] or 0.0) / top), r[1]

        hits: list[Hit] = []
        for kind, name, version, sec, desc, ins, outs, self_score, bm25, doc_id in sorted(kept, key=order)[:limit]:
            raw = float(bm25 or 0.0)
            sim = sims.get(doc_id)
            if vectors:
                score = cal.score(sim) if sim is not None else 0.0
            else:
                score = min(1.0, raw / self_score) if self_score else 0.0
            hits.append(Hit(kind, name, version, sec, desc, score, raw, sim,
                            tuple(tuple(x) for x in json.loads(ins)), tuple(tuple(x) for x in json.loads(outs))))
        return hits

    def close_to(self, proposal: Proposal, limit: int = 3) -> list[Hit]:
        """Trusted skills close to a proposal (its own name excluded: re-proposing a skill revises it)."""
        self.ensure()
        return self.query(spec_query(proposal), limit=limit, exclude=(proposal.name,))


# The packaged model's calibration (see Calibration): the median cosine of a proposal to the skills of the corpus
# (unrelated tasks) and the median cosine of a proposal to the skill it re-invents, on the development set of
# benchmarks/search_hit_rate.py.
PACKAGED_CALIBRATION = Calibration(floor=0.138, ceiling=0.729)


def open_index(home: KaviHome, records: ForgeRecords, config: SearchConfig | None = None) -> SearchIndex:
    """The home's index with the configured embedder: an endpoint when KAVI_EMBEDDINGS_URL is set, else the
    packaged model unless KAVI_SEARCH_EMBEDDER=none or it cannot run here (then BM25 alone, with the reason)."""
    cfg = config or SearchConfig.from_env()
    if cfg.embeddings_url:
        from kavi.search.embeddings import HttpEmbedder

        return SearchIndex(home, records, cfg, HttpEmbedder(
            cfg.embeddings_url, cfg.embeddings_model or "", timeout_s=cfg.timeout_s, query_prefix=cfg.query_prefix,
            passage_prefix=cfg.passage_prefix))
    if cfg.embedder == "none":
        return SearchIndex(home, records, cfg, note="KAVI_SEARCH_EMBEDDER=none")
    from kavi.search import packaged

    why = packaged.unavailable()
    if why is not None:
        return SearchIndex(home, records, cfg, note=why)
    return SearchIndex(home, records, cfg, packaged.PackagedEmbedder(), PACKAGED_CALIBRATION)
