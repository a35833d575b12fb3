"""`kavi holdout add|list`: a person's right answer becomes a holdout of the proposal, recorded as a new revision;
bad input is one line and exit 2."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi_assets.cli.main import app

runner = CliRunner()


@pytest.fixture()
def proposed(kavi_home: KaviHome, tmp_path: Path, word_count_spec: Any) -> KaviHome:
    spec = word_count_spec(inputs=[{"name": "text", "type": "str"}, {"name": "limit", "type": "int | None",
                                                                     "required": False}])
    path = tmp_path / "word_count.yaml"
    path.write_text(yaml.safe_dump(spec))
    result = runner.invoke(app, ["propose", str(path)])
    assert result.exit_code == 0, result.output
    return kavi_home


def _records(home: KaviHome) -> ForgeRecords:
    return ForgeRecords(Ledger(home.ledger_path))


def test_add_records_a_new_revision_with_who(proposed: KaviHome) -> None:
    before = _records(proposed).require_proposal("word_count")
    result = runner.invoke(app, ["holdout", "add", "word_count", "--input", '{"text": "x\\ny", "limit": null}',
                                 "--expected", '{"words": 2, "lines": 2}', "--by", "ada"])
    assert result.exit_code == 0, result.output
    assert "holdout 2 added by ada (revision 2)" in result.output
    row = _records(proposed).require_proposal("word_count")
    assert row.revision == 2 and row.spec_sha256 != before.spec_sha256
    assert row.proposal.holdout_examples[-1].input == {"text": "x\ny", "limit": None}
    assert row.proposal.holdout_examples[-1].expected == {"words": 2, "lines": 2}
    revision = _records(proposed).revisions("word_count")[-1]
    assert revision.actor == "ada" and revision.created_at is not None
    assert [d["field"] for d in revision.diff] == ["holdout_examples"]
    listing = runner.invoke(app, ["holdout", "list", "word_count", "--json"])
    assert listing.exit_code == 0
    doc = json.loads(listing.output)
    assert doc["revision"] == 2 and len(doc["holdouts"]) == 2 and doc["counterexamples"] == []
    text = runner.invoke(app, ["holdout", "list", "word_count"])
    assert "2 holdout example(s)" in text.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input", "{not json", "--expected", '{"words": 1}'], "--input is not valid JSON"),
        (["--input", "[1, 2]", "--expected", '{"words": 1}'], "must be a JSON object"),
        (["--input", '{"txt": "a"}', "--expected", '{"words": 1}'], "unknown input field(s) txt"),
        (["--input", '{"limit": 3}', "--expected", '{"words": 1}'], "lacks required field(s) text"),
        (["--input", '{"text": 3}', "--expected", '{"words": 1}'], "input field 'text' must be str"),
        (["--input", '{"text": "a"}', "--expected", '{"word": 1}'], "unknown output field(s) word"),
        (["--input", '{"text": "a"}', "--expected", '{"words": true}'], "expected field 'words' must be int"),
        (["--input", '{"text": "a"}', "--expected", "{}"], "must name at least one output field"),
        (["--input", '{"text": "a b"}', "--expected", '{"words": 2}'], "already in the proposal"),
        (["--expected", '{"words": 1}'], "either with --input JSON or with --counterexample N"),
        (["--counterexample", "1", "--expected", '{"words": 1}'], "has no counterexample"),
        (["--input", '{"text": "a"}', "--expected", '{"words": 1}', "--by", " "], "needs a name: --by WHO"),
    ],
)
def test_add_refuses_bad_input_with_one_line_and_exit_2(proposed: KaviHome, args: list[str], message: str) -> None:
    full = ["holdout", "add", "word_count", *args]
    if "--by" not in args:
        full += ["--by", "ada"]
    result = runner.invoke(app, full)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert _records(proposed).require_proposal("word_count").revision == 1


def test_unknown_proposal_is_exit_2(kavi_home: KaviHome) -> None:
    result = runner.invoke(app, ["holdout", "add", "nope", "--input", '{"text": "a"}', "--expected",
                                 '{"words": 1}', "--by", "ada"])
    assert result.exit_code == 2 and "no proposal named 'nope'" in result.output
    assert runner.invoke(app, ["holdout", "list", "nope"]).exit_code == 2
