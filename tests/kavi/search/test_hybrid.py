"""The default ranking: BM25 and the packaged embedding model (all-MiniLM-L6-v2, in process), fused; vectors
computed once per passage and reused across rebuilds; numbers and symbols kept as terms; skills unrelated to the
query left out; and BM25 alone, with the reason, where the model cannot run."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.search import packaged
from kavi.search.documents import Doc, spec_query
from kavi.search.index import SearchConfig, SearchIndex, open_index
from kavi_assets.cli.main import app
from tests.factories import trust_example

SHIPPED = ("word_count", "slugify_title", "extract_emails", "parse_duration", "write_note", "http_get_json")

pytestmark = pytest.mark.skipif(packaged.unavailable() is not None, reason=str(packaged.unavailable()))


@pytest.fixture()
def shipped(kavi_home: KaviHome) -> KaviHome:
    for name in SHIPPED:
        trust_example(kavi_home, name)
    return kavi_home


def _index(home: KaviHome, config: SearchConfig | None = None) -> SearchIndex:
    return open_index(home, ForgeRecords(Ledger(home.ledger_path)), config or SearchConfig())


def test_the_packaged_model_is_the_default_and_ranks_by_meaning(shipped: KaviHome) -> None:
    index = _index(shipped)
    assert index.mode == "bm25+vector" and "all-MiniLM-L6-v2" in index.describe
    cases = {
        "convert 2h into seconds": "parse_duration",
        "pull addresses out of an email body": "extract_emails",
        "download json from a web address": "http_get_json",  # BM25 alone ranks the e-mail skills first
        "turn a heading into a slug": "slugify_title",
    }
    for query, expected in cases.items():
        hits = index.search(query)
        assert hits and hits[0].name == expected, (query, [(h.name, h.score) for h in hits])
        assert hits[0].similarity is not None and 0 < hits[0].score <= 1
    # A query that means nothing near any skill lists nothing (not the whole registry, ranked).
    assert index.search("zzzz qqqq") == [] and index.search("hello") == []
    # The score is calibrated meaning: the same task in other words (no examples, other output names) is near 1,
    # and the next skill far below.
    paraphrase = {"name": "count_text_words", "side_effect_class": "READ_ONLY",
                  "description": "Tell how many words, lines and characters a piece of text has.",
                  "inputs": [{"name": "text", "type": "str"}],
                  "outputs": [{"name": "words", "type": "int"}, {"name": "lines", "type": "int"}]}
    hits = index.query(spec_query(paraphrase), limit=3)
    assert hits[0].name == "word_count" and hits[0].score >= 0.8
    assert all(h.score < 0.6 for h in hits[1:])


def test_vectors_are_computed_once_per_passage_and_reused(shipped: KaviHome) -> None:
    index = _index(shipped)
    index.search("words")
    assert index.embedded == len(SHIPPED)
    trust_example(shipped, "read_notes_by_tag")
    assert index.search("notes with a given tag")[0].name == "read_notes_by_tag"
    assert index.embedded == 1  # only the new skill's passage was encoded
    # Another embedder's vectors are never mixed in: BM25 alone builds no vectors, and back again all are new.
    _index(shipped, SearchConfig(embedder="none")).search("words")
    again = _index(shipped)
    again.search("words")
    assert again.embedded == len(SHIPPED) + 1


def test_numbers_and_symbols_are_terms(kavi_home: KaviHome) -> None:
    def spec(name: str, description: str) -> dict[str, object]:
        return {"name": name, "description": description, "side_effect_class": "READ_ONLY",
                "inputs": [{"name": "n", "type": "int"}], "outputs": [{"name": "ok", "type": "bool"}]}

    docs = [Doc.from_spec("skill", spec("is_multiple_a", "Check whether a number is a multiple of 11."), 1),
            Doc.from_spec("skill", spec("is_multiple_b", "Check whether a number is a multiple of 7."), 1),
            Doc.from_spec("skill", spec("remainder", "The remainder x % y of two integers."), 1)]
    for config in (SearchConfig(embedder="none"), SearchConfig()):
        index = open_index(kavi_home, None, config)  # type: ignore[arg-type]  # built from docs, not a ledger
        index.build(docs, "numbers")
        assert index.query("a multiple of 11")[0].name == "is_multiple_a", config
        assert index.query("is it a multiple of 7")[0].name == "is_multiple_b", config
        bm25 = {h.name: h.bm25 for h in index.query("x % y")}
        assert bm25.get("remainder", 0) > 0 and bm25.get("is_multiple_a", 0) == 0, config


def test_bm25_alone_with_the_reason_where_the_model_cannot_run(shipped: KaviHome,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    why = "the packaged embedding model's weights.npz is missing from this install"
    monkeypatch.setattr(packaged, "unavailable", lambda: why)
    index = _index(shipped)
    assert index.mode == "bm25" and why in index.describe
    assert index.search("count the words of a text")[0].name == "word_count"
    result = CliRunner().invoke(app, ["search", "slug"])
    assert result.exit_code == 0 and f"BM25 only ({why})" in result.stdout
    doc = json.loads(CliRunner().invoke(app, ["search", "slug", "--json"]).stdout)
    assert doc["mode"] == "bm25" and why in doc["ranking"]
    doctor = CliRunner().invoke(app, ["doctor"])
    assert f"BM25 only: {why}" in doctor.stdout


def test_kavi_search_says_how_it_ranks(shipped: KaviHome, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["search", "turn a heading into a slug"])
    assert result.exit_code == 0, result.output
    assert "BM25 and meaning (all-MiniLM-L6-v2" in result.stdout and "slugify_title@1" in result.stdout
    doc = json.loads(CliRunner().invoke(app, ["search", "turn a heading into a slug", "--json"]).stdout)
    assert doc["mode"] == "bm25+vector" and doc["results"][0]["name"] == "slugify_title"
    assert doc["results"][0]["similarity"] is not None


def test_a_damaged_model_is_one_line_not_a_traceback(shipped: KaviHome, monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    # The model's files are there (so search means to use it), but the weights are cut short.
    damaged = tmp_path / "model"
    damaged.mkdir()
    for name in packaged.MODEL_FILES:
        data = (packaged.MODEL_DIR / name).read_bytes()
        (damaged / name).write_bytes(data[:len(data) // 3] if name.endswith(".npz") else data)
    monkeypatch.setattr(packaged, "MODEL_DIR", damaged)
    monkeypatch.setattr(packaged, "_model", None)
    monkeypatch.setattr(packaged, "_seen", {})
    result = CliRunner().invoke(app, ["search", "count the words of a text"])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)  # not the loader's own error
    assert "the packaged embedding model (all-MiniLM-L6-v2) could not run: " in result.stderr
    assert "set KAVI_SEARCH_EMBEDDER=none" in result.stderr and "Traceback" not in result.output
