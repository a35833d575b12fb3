"""Search with DuckDB's own fts extension and the packaged embedding model: BM25 ranking, the index rebuilt when the
ledger moves, bounded queries, `kavi search`, `kavi propose`'s warning and --force, the hybrid ranking by default
(vectors reused across rebuilds, numbers kept as terms, unrelated skills left out), the fallback to BM25 where the
model cannot run, and vector similarity (vss) from a configured embedding endpoint."""

import hashlib
import json
import math
import os
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import duckdb
import pytest
import typer
import yaml
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.search import packaged
from kavi.search.documents import MAX_QUERY_CHARS, SearchError
from kavi.search.embeddings import EmbeddingError, parse_embeddings
from kavi.search.extensions import load_extension
from kavi.search.index import FIELD_WEIGHTS, SearchConfig, lexical, open_index
from kavi.settings_parsers import ConfigError
from kavi_assets.cli.main import app
from tests.factories import example_spec, trust_example

SHIPPED = ("word_count", "slugify_title", "extract_emails", "parse_duration", "write_note", "http_get_json")
# Fewer for the tests that need only a few: trusting costs a ledger write per step.
FEW = ("word_count", "slugify_title", "extract_emails")


@pytest.fixture()
def shipped(kavi_home: KaviHome) -> KaviHome:
    for name in SHIPPED:
        trust_example(kavi_home, name)
    return kavi_home


@pytest.fixture()
def few(kavi_home: KaviHome) -> KaviHome:
    for name in FEW:
        trust_example(kavi_home, name)
    return kavi_home


def _index(home: KaviHome, config: SearchConfig | None = None):  # type: ignore[no-untyped-def]
    """BM25 alone unless a configuration is given (the tests of the lexical scores and of the guard's logic)."""
    return open_index(home, ForgeRecords(Ledger(home.ledger_path)), config or SearchConfig(embedder="none"))


@pytest.fixture()
def bm25_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands rank by BM25 alone (the tests whose scores are the lexical ones)."""
    monkeypatch.setenv("KAVI_SEARCH_EMBEDDER", "none")


def test_bm25_ranks_the_matching_skill_first(shipped: KaviHome) -> None:
    index = _index(shipped)
    cases = {
        "how many words are in this text": "word_count",
        "turn a heading into a slug": "slugify_title",
        "pull every email address out of a message": "extract_emails",
        "turn 1h30m into a number of seconds": "parse_duration",
        "save a markdown note in the vault": "write_note",
        # (words alone rank the e-mail skills first for "download json from a web address", since a
        # description's words weigh more than a name's: test_hybrid asserts it under the default ranking)
    }
    for query, expected in cases.items():
        hits = index.search(query)
        assert hits and hits[0].name == expected, (query, [(h.name, h.score) for h in hits])
        assert 0 < hits[0].score <= 1.0
    assert index.search("zzzz qqqq") == []  # no shared term: nothing, not the whole registry
    assert index.mode == "bm25"


def test_bm25_is_the_fts_extensions_own_score_summed_over_the_weighted_fields(shipped: KaviHome) -> None:
    """The parts stored at build time add up, for any query, to the fts extension's match_bm25 of each field
    times the field's weight: the score the index tables would give, read again for each query."""
    index = _index(shipped)
    index.ensure()
    con = duckdb.connect(":memory:")
    load_extension(con, "fts")
    con.execute(f"ATTACH '{index.path}' AS idx (READ_ONLY)")
    con.execute("USE idx")
    for query in ("how many words are in this text, words and words", "turn 1h30m into seconds", "x % y",
                  "e-mail addresses of a message", "a note in the vault with tags"):
        want: dict[str, float] = {}
        for field, weight in FIELD_WEIGHTS.items():
            for name, score in con.execute(
                    "SELECT name, fts_main_docs_skill.match_bm25(doc_id, ?, fields := ?) FROM docs_skill",
                    [lexical(query), field]).fetchall():
                if score is not None:
                    want[name] = want.get(name, 0.0) + weight * score
        got = {h.name: h.bm25 for h in index.query(query, limit=50)}
        assert got.keys() == want.keys(), query
        assert got == pytest.approx(want, rel=1e-9), query
    con.close()


def test_index_is_rebuilt_only_when_the_ledger_moves(shipped: KaviHome) -> None:
    index = _index(shipped)
    index.search("words")
    built = index.rebuilds
    index.search("slug")
    assert index.rebuilds == built  # nothing changed: the derived file is reused
    trust_example(shipped, "read_notes_by_tag")
    hits = index.search("notes with a given tag")
    assert index.rebuilds == built + 1 and hits[0].name == "read_notes_by_tag"
    # Deleting the derived file loses nothing: it is rebuilt from the ledger.
    index.path.unlink()
    assert index.search("notes with a given tag")[0].name == "read_notes_by_tag"


def _attached_indexes(folder: Path) -> list[tuple[str, str]]:
    """(alias, file) of the index files under `folder` attached to this process's DuckDB database."""
    from kavi.search import index as index_module

    with index_module._readers_lock:
        rows = index_module._database().execute(
            "SELECT database_name, path FROM duckdb_databases() WHERE NOT internal AND database_name LIKE 'search_%'"
        ).fetchall()
    return [(alias, Path(path).name) for alias, path in rows if Path(path).parent == folder]


def test_rebuilds_attach_the_new_file_and_detach_the_old_one(few: KaviHome) -> None:
    """Index files are attached to the process's one DuckDB database: a rebuild's file is detached once written,
    the replaced file's reader goes with it, and queries read the new file."""
    index = _index(few)
    assert index.search("count the words")[0].name == "word_count"
    before = _attached_indexes(index.path.parent)
    assert [name for _, name in before] == [index.path.name]  # the kept reader of this index, nothing else
    for name in ("read_notes_by_tag", "parse_duration"):
        trust_example(few, name)
    assert index.search("notes with a given tag")[0].name == "read_notes_by_tag"
    after = _attached_indexes(index.path.parent)
    # The old file's reader was detached and the new file's attached; the rebuild's own file is not left attached.
    assert [name for _, name in after] == [index.path.name] and after != before
    assert index.rebuilds >= 1


def test_a_forked_child_searches_through_a_database_of_its_own(few: KaviHome) -> None:
    index = _index(few)
    assert index.search("count the words")[0].name == "word_count"  # the parent keeps a reader
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            from kavi.search import index as index_module

            name = index.search("count the words")[0].name
            own = index_module._bases[os.getpid()][0] is not index_module._bases[os.getppid()][0]
            os.write(write, f"{name} {own}".encode())
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert status == 0 and os.read(read, 64) == b"word_count True"
    os.close(read)
    assert index.search("count the words")[0].name == "word_count"  # the parent's reader is untouched


def test_queries_are_bounded_and_cleaned(few: KaviHome) -> None:
    index = _index(few)
    with pytest.raises(SearchError, match="at most"):
        index.search("word " * (MAX_QUERY_CHARS // 5 + 1))
    with pytest.raises(SearchError, match="empty"):
        index.search(" \x00\x01 ")
    assert index.search("count\x00 words")[0].name == "word_count"
    assert len(index.search("a text", limit=10_000)) <= 50


def test_kavi_search_cli(few: KaviHome, bm25_only: None) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["search", "count the words of a text", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["mode"] == "bm25" and doc["results"][0]["name"] == "word_count"
    assert doc["results"][0]["inputs"] == {"text": "str"}
    text = runner.invoke(app, ["search", "slug"])
    assert text.exit_code == 0 and "BM25 only" in text.stdout and "slugify_title@1" in text.stdout
    too_long = runner.invoke(app, ["search", "x" * (MAX_QUERY_CHARS + 1)])
    assert too_long.exit_code == 2 and "at most" in too_long.stderr


def _write(tmp: Path, spec: dict[str, object]) -> Path:
    path = tmp / f"{spec['name']}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_close_skill_check_refuses_above_the_threshold_and_force_passes(few: KaviHome, bm25_only: None,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from kavi.proposals.model import parse_proposal
    from kavi_assets.cli.serve_cmd import check_close_skills

    copy = parse_proposal({**example_spec("word_count"), "name": "count_words_again"})
    with pytest.raises(typer.Exit) as refused:
        check_close_skills(few, copy, force=False)
    assert refused.value.exit_code == 2
    assert "does the task of trusted skill word_count@1" in capsys.readouterr().err
    check_close_skills(few, copy, force=True)  # warned, not refused
    assert "word_count@1 is close to count_words_again (score 1.00" in capsys.readouterr().out
    # Re-proposing a trusted skill under its own name revises it: not a duplicate of itself.
    check_close_skills(few, parse_proposal(example_spec("word_count")), force=False)
    assert "is close" not in capsys.readouterr().out


def test_close_in_words_is_not_a_duplicate_without_the_same_task(few: KaviHome, bm25_only: None,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # The same words (score 1.00) are no evidence on their own: a refusal needs the same class and fields, and the
    # trusted skill answering the proposal's examples as the proposal expects (run in the gate sandbox).
    from kavi.proposals.model import parse_proposal
    from kavi_assets.cli.serve_cmd import check_close_skills

    spec = example_spec("word_count")
    other_answers = {**spec, "name": "count_long_words", "examples": [
        {**ex, "expected": {**ex["expected"], "words": ex["expected"]["words"] + 1}} for ex in spec["examples"]]}
    check_close_skills(few, parse_proposal(other_answers), force=False)  # warned, recorded
    out = capsys.readouterr().out
    # (its examples' numbers are terms too, and they differ: a score just under 1, far above the 0.80 that refuses)
    assert re.search(r"word_count@1 is close to count_long_words \(score (0\.9\d|1\.00); 0\.80 and the same", out)
    assert "not the same task: it does not answer the proposal's examples as expected (example[0]: wrong output" in out

    other_inputs = {**spec, "name": "count_body_words",
                    "inputs": [{**spec["inputs"][0], "name": "body"}],
                    "examples": [{**ex, "input": {"body": ex["input"]["text"]}} for ex in spec["examples"]],
                    "holdout_examples": [{**ex, "input": {"body": ex["input"]["text"]}}
                                         for ex in spec.get("holdout_examples", [])]}
    check_close_skills(few, parse_proposal(other_inputs), force=False)
    out = capsys.readouterr().out
    assert "not the same task: its inputs (text: str) are not the proposal's (body: str)" in out

    other_class = {**spec, "name": "count_words_and_save", "side_effect_class": "FILE_WRITE"}
    check_close_skills(few, parse_proposal(other_class), force=False)
    assert "not the same task: its class is READ_ONLY, the proposal's FILE_WRITE" in capsys.readouterr().out


@pytest.mark.slow  # six `kavi propose` runs, three of them through Dagster's partition store
def test_propose_warns_and_refuses_a_near_copy_without_force(few: KaviHome, tmp_path: Path, bm25_only: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    copy = {**example_spec("word_count"), "name": "count_words_again"}
    refused = runner.invoke(app, ["propose", str(_write(tmp_path, copy))])
    assert refused.exit_code == 2, refused.output
    assert "does the task of trusted skill word_count@1" in refused.stderr and "--force" in refused.stderr
    assert ForgeRecords(Ledger(few.ledger_path)).get_proposal("count_words_again") is None
    forced = runner.invoke(app, ["propose", str(_write(tmp_path, copy)), "--force"])
    assert forced.exit_code == 0, forced.output
    assert "word_count@1 is close" in forced.stdout
    assert ForgeRecords(Ledger(few.ledger_path)).get_proposal("count_words_again") is not None

    paraphrase = {"name": "count_text_words", "side_effect_class": "READ_ONLY",
                  "description": "Tell how many words, lines and characters a piece of text has.",
                  "inputs": [{"name": "text", "type": "str"}],
                  "outputs": [{"name": "words", "type": "int"}, {"name": "lines", "type": "int"}],
                  "examples": [{"input": {"text": "hello world"}, "expected": {"words": 2, "lines": 1}}]}
    # Below the threshold: a warning that names the skill, its score and how the schemas differ; recorded.
    monkeypatch.setenv("KAVI_SEARCH_DUPLICATE_SCORE", "0.95")
    warned = runner.invoke(app, ["propose", str(_write(tmp_path, paraphrase))])
    assert warned.exit_code == 0, warned.output
    assert "word_count@1 is close to count_text_words" in warned.stdout
    assert "only word_count has characters: int" in warned.stdout  # how they differ in schema
    # At or above the threshold (BM25 puts this paraphrase at 0.76), word_count answers the example, but the
    # description says the task in other words, and no model is configured to judge them: warned, recorded, and
    # the warning says how the descriptions differ.
    monkeypatch.setenv("KAVI_SEARCH_DUPLICATE_SCORE", "0.75")
    paraphrase["name"] = "count_text_words_two"
    strict = runner.invoke(app, ["propose", str(_write(tmp_path, paraphrase))])
    assert strict.exit_code == 0, strict.output
    assert ("not the same task: it answers all 1 of the proposal's examples as expected, but the descriptions differ "
            "(only the proposal's says 'has', 'how', 'many', 'piece', 'tell'; only its says 'count', 'non', 'run', "
            "'space')") in " ".join(strict.stdout.split())
    assert ForgeRecords(Ledger(few.ledger_path)).get_proposal("count_text_words_two") is not None
    # The same description under a third name: refused at that threshold, with the way out for another task (one
    # of the skill's own examples, with an input the proposal's do not ask).
    same_words = {**paraphrase, "name": "count_text_words_three",
                  "description": example_spec("word_count")["description"]}
    refused_too = runner.invoke(app, ["propose", str(_write(tmp_path, same_words))])
    assert refused_too.exit_code == 2, refused_too.output
    assert "does the task of trusted skill word_count@1" in refused_too.stderr
    assert "the same description in its content words" in " ".join(refused_too.stderr.split())
    own = next(ex for ex in example_spec("word_count")["examples"] if ex["input"] != {"text": "hello world"})
    shown = f"word_count(text={own['input']['text']!r}) -> "
    assert f"add an example word_count answers otherwise (one of its own: {shown}" in refused_too.stderr
    # The default ranking (by meaning) and the default threshold (0.8) refuse it too.
    monkeypatch.delenv("KAVI_SEARCH_DUPLICATE_SCORE")
    monkeypatch.delenv("KAVI_SEARCH_EMBEDDER")
    same_words["name"] = "count_text_words_four"
    default = runner.invoke(app, ["propose", str(_write(tmp_path, same_words))])
    if packaged.unavailable() is None:
        assert default.exit_code == 2 and "does the task of trusted skill word_count@1" in default.stderr
    monkeypatch.setenv("KAVI_SEARCH_EMBEDDER", "none")
    monkeypatch.setenv("KAVI_SEARCH_DUPLICATE_SCORE", "2")
    bad = runner.invoke(app, ["propose", str(_write(tmp_path, paraphrase))])
    assert bad.exit_code == 2 and "KAVI_SEARCH_DUPLICATE_SCORE" in bad.stderr

    unrelated = {"name": "reverse_string", "side_effect_class": "READ_ONLY",
                 "description": "Reverse the order of the characters of a string.",
                 "inputs": [{"name": "value", "type": "str"}], "outputs": [{"name": "reversed", "type": "str"}],
                 "examples": [{"input": {"value": "abc"}, "expected": {"reversed": "cba"}}]}
    monkeypatch.delenv("KAVI_SEARCH_DUPLICATE_SCORE")
    quiet = runner.invoke(app, ["propose", str(_write(tmp_path, unrelated))])
    assert quiet.exit_code == 0 and "is close" not in quiet.stdout


def test_search_config_is_checked() -> None:
    from kavi.settings import config_problems

    assert SearchConfig.from_env({}).embedder == "packaged"
    assert SearchConfig.from_env({"KAVI_SEARCH_EMBEDDER": "none"}).embedder == "none"
    assert any("KAVI_SEARCH_DUPLICATE_SCORE" in p for p in config_problems({"KAVI_SEARCH_DUPLICATE_SCORE": "7"}))
    for env in ({"KAVI_SEARCH_DUPLICATE_SCORE": "x"}, {"KAVI_EMBEDDINGS_URL": "ftp://h"},
                {"KAVI_SEARCH_EMBEDDER": "bert"},
                {"KAVI_EMBEDDINGS_URL": "http://127.0.0.1:1/v1"}):
        with pytest.raises(ConfigError):
            SearchConfig.from_env(env)


def test_embedding_answers_are_parsed_strictly() -> None:
    assert parse_embeddings({"data": [{"index": 1, "embedding": [0, 1]}, {"index": 0, "embedding": [1, 0]}]},
                            2) == [[1.0, 0.0], [0.0, 1.0]]
    for bad in ({}, {"data": [{"embedding": [1]}]}, {"data": [{"embedding": ["a"]}, {"embedding": [1]}]},
                {"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]},
                {"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [1]}]},
                {"data": [{"embedding": [math.inf]}, {"embedding": [1]}]}):
        with pytest.raises(EmbeddingError):
            parse_embeddings(bad, 2)


def _bag_of_words(text: str, dim: int = 64) -> list[float]:
    """A real, deterministic embedding: hashed word counts (enough to test the vector path end to end)."""
    vec = [0.0] * dim
    for word in text.lower().split():
        vec[int(hashlib.sha256(word.strip(".,:;!?\"'()[]{}").encode()).hexdigest(), 16) % dim] += 1.0
    return vec


@pytest.fixture()
def embedding_endpoint() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = [{"index": i, "embedding": _bag_of_words(t)} for i, t in enumerate(body["input"])]
            out = json.dumps({"data": data, "model": body["model"]}).encode()
            self.send_response(200 if self.path == "/v1/embeddings" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_vector_similarity_when_an_embedding_endpoint_is_configured(few: KaviHome, embedding_endpoint: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    config = SearchConfig.from_env({"KAVI_EMBEDDINGS_URL": embedding_endpoint, "KAVI_EMBEDDINGS_MODEL": "bow"})
    index = _index(few, config)
    hits = index.search("count the words of a text")
    assert index.mode == "bm25+vector"
    assert hits[0].name == "word_count" and hits[0].similarity is not None and 0 < hits[0].similarity <= 1
    assert 0 < hits[0].score <= 1
    monkeypatch.setenv("KAVI_EMBEDDINGS_URL", embedding_endpoint)
    monkeypatch.setenv("KAVI_EMBEDDINGS_MODEL", "bow")
    result = CliRunner().invoke(app, ["search", "email addresses", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["mode"] == "bm25+vector" and doc["results"][0]["name"] == "extract_emails"
    assert doc["results"][0]["similarity"] is not None
