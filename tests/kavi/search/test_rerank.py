"""The model's re-rank of `kavi search`, with a recorded answer served by the recorded model over HTTP: its order and
reasons shown, and an answer that is not what was asked (a name that was no candidate, no JSON) or no answer at all
leaving the fused order, said in one line."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.llm.recorded import RecordedModelServer
from kavi.search.rerank import RERANK_KIND, RerankError, parse_ranking, search_key
from kavi_assets.cli.main import app
from tests.factories import trust_example

QUERY = "how many words are in this text"
MODEL = "recorded-reranker"


def _cassette(folder: Path, query: str, raw: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{search_key(query)}.yaml").write_text(yaml.safe_dump({
        "skill": search_key(query), "models": [MODEL],
        "interactions": [{"kind": RERANK_KIND, "raw": raw}]}))


@pytest.fixture()
def reranker(kavi_home: KaviHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in ("word_count", "slugify_title", "extract_emails"):
        trust_example(kavi_home, name)
    folder = tmp_path / "cassettes"
    _cassette(folder, QUERY, json.dumps({"ranking": [
        {"name": "word_count", "reason": "it counts the words (and lines and characters) of a text"}]}))
    _cassette(folder, "slug", json.dumps({"ranking": [{"name": "not_a_candidate", "reason": "x"}]}))
    _cassette(folder, "emails", "I think extract_emails fits best.")
    server = RecordedModelServer(folder).start()
    monkeypatch.setenv("KAVI_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("KAVI_LLM_MODELS", MODEL)
    yield folder
    server.stop()


def test_the_model_reranks_with_its_reasons(reranker: Path) -> None:
    result = CliRunner().invoke(app, ["search", QUERY, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["reranked_by"] == MODEL and doc["not_reranked"] is None
    assert doc["results"][0]["name"] == "word_count"
    assert doc["results"][0]["reason"] == "it counts the words (and lines and characters) of a text"
    assert all("reason" not in r for r in doc["results"][1:])  # left out by the model: after, without a reason
    text = CliRunner().invoke(app, ["search", QUERY])
    assert "re-ranked by recorded-reranker" in text.stdout and "why: it counts the words" in text.stdout
    off = CliRunner().invoke(app, ["search", QUERY, "--json"], env={"KAVI_SEARCH_RERANK": "0"})
    assert json.loads(off.stdout)["reranked_by"] is None


def test_an_answer_that_is_not_what_was_asked_keeps_the_fused_order(reranker: Path) -> None:
    fused = json.loads(CliRunner().invoke(app, ["search", "slug", "--json"], env={"KAVI_SEARCH_RERANK": "0"}).stdout)
    for query, why in (("slug", "the model ranked 'not_a_candidate', which is not a candidate"),
                       ("emails", "the model's answer is not JSON"),
                       ("words of a note", "the model could not re-rank")):  # no recording: the endpoint's error
        result = CliRunner().invoke(app, ["search", query, "--json"])
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        assert doc["reranked_by"] is None and why in doc["not_reranked"], doc
        if query == "slug":
            assert [r["name"] for r in doc["results"]] == [r["name"] for r in fused["results"]]
    said = CliRunner().invoke(app, ["search", "slug"])
    assert said.exit_code == 0 and "not re-ranked by the model: the model ranked 'not_a_candidate'" in said.stderr


def test_rankings_are_parsed_strictly() -> None:
    names = ["a", "b"]
    assert parse_ranking('{"ranking": [{"name": "b", "reason": " fits\\n well "}]}', names) == [("b", "fits well")]
    assert parse_ranking('```json\n{"ranking": []}\n```', names) == []
    for bad in ("[]", '{"ranking": {}}', '{"ranking": [{"name": "a"}]}',
                '{"ranking": [{"name": "a", "reason": "x"}, {"name": "a", "reason": "y"}]}',
                '{"ranking": [{"name": 3, "reason": "x"}]}'):
        with pytest.raises(RerankError):
            parse_ranking(bad, names)
