"""`kavi run` and `kavi chain` at the one door: an input field the schema does not name refused, the surrogate case,
revoked, suspect and tampered versions refused with a record, an unwritable log running nothing, and every refusal
said in one line without the home's absolute path or a traceback."""

import json
from pathlib import Path

from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.ledger.verification_records import VerificationRecords
from kavi.runtime.records import ExecutionLog
from kavi_assets.cli.main import app
from tests.factories import WORD_COUNT_V2, trust_example, trust_version, word_count_spec

runner = CliRunner()


def _refused(home: KaviHome, args: list[str], needle: str, status: int = 2) -> str:
    res = runner.invoke(app, args)
    out = res.output.strip()
    assert res.exit_code == status, out[-2000:]
    assert "Traceback" not in out and str(home.root) not in out, out
    assert needle in out, out
    return out


def _refusals(home: KaviHome) -> list[tuple[str, int | None, str | None]]:
    return [(r.skill_name, r.skill_version, r.refusal) for r in ExecutionLog(home.executions_log).read_all()
            if r.refusal is not None]


def _files(home: KaviHome) -> list[Path]:
    return [p for p in Path(home.vault_dir).rglob("*") if p.is_file()]


def test_extra_field_is_refused_by_kavi_run(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "word_count")
    out = _refused(kavi_home, ["run", "word_count", "--json", '{"text": "a b", "verbose": true}'],
                   "verbose: Extra inputs are not permitted")
    assert len(out.splitlines()) == 1
    assert _refusals(kavi_home) == [("word_count", 1, "SCHEMA")]


def test_surrogate_in_an_extra_field_writes_nothing_and_is_recorded(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "write_note")
    _refused(kavi_home, ["run", "write_note", "--yes", "--json",
                         '{"path": "n.md", "content": "x", "note": "\\ud800"}'], "note: Extra inputs")
    assert _files(kavi_home) == []
    assert _refusals(kavi_home) == [("write_note", 1, "SCHEMA")]


def test_revoked_suspect_and_tampered_versions_are_refused_with_records(kavi_home: KaviHome) -> None:
    trust_version(kavi_home)
    trust_version(kavi_home, source=WORD_COUNT_V2, tests=None)
    records = ForgeRecords(Ledger(kavi_home.ledger_path))
    records.revoke_version("word_count", 1, reason="miscounts", actor="ada")
    _refused(kavi_home, ["run", "word_count@1", "--json", '{"text": "a"}'], "REVOKED (miscounts)")
    assert VerificationRecords(records.ledger).mark_suspect("word_count", 2, reason="a judge moved", actor="t")
    _refused(kavi_home, ["run", "word_count", "--json", '{"text": "a"}'], "is SUSPECT")
    trust_example(kavi_home, "slugify_title")
    path = kavi_home.root / records.trusted_version("slugify_title", 1).skill_path  # type: ignore[union-attr]
    path.write_text(path.read_text() + "\n# tampered\n")
    out = _refused(kavi_home, ["run", "slugify_title", "--json", '{"title": "Hi"}'], "hash mismatch")
    assert str(path.relative_to(kavi_home.root)) in out
    assert _refusals(kavi_home) == [("word_count", 1, "REVOKED"), ("word_count", 2, "SUSPECT"),
                                    ("slugify_title", 1, "TAMPERED")]


def test_a_chain_step_of_a_revoked_version_is_recorded(kavi_home: KaviHome) -> None:
    trust_version(kavi_home)
    trust_version(kavi_home, source=WORD_COUNT_V2, tests=None)
    ForgeRecords(Ledger(kavi_home.ledger_path)).revoke_version("word_count", 1, reason="miscounts", actor="ada")
    spec = {"steps": [{"skill": "word_count@2", "input": {"text": "a"}},
                      {"skill": "word_count@1", "input": {"text": "b"}}]}
    _refused(kavi_home, ["chain", "--json", json.dumps(spec)], "REVOKED")
    assert _refusals(kavi_home) == [("word_count", 1, "REVOKED")]
    assert [r.success for r in ExecutionLog(kavi_home.executions_log).read_all()] == [False]  # step 0 never ran


def test_unwritable_log_runs_nothing(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "write_note")
    kavi_home.executions_log.mkdir()
    out = _refused(kavi_home, ["run", "write_note", "--yes", "--json", '{"path": "n.md", "content": "x"}'],
                   "the execution log (executions.jsonl) could not be written",
                   status=3)  # the home's own file: the environment, not the person's usage
    assert len(out.splitlines()) == 1
    assert _files(kavi_home) == []


def test_a_run_writes_its_start_then_its_record(kavi_home: KaviHome) -> None:
    trust_version(kavi_home, word_count_spec())
    res = runner.invoke(app, ["run", "word_count", "--json", '{"text": "a b"}'])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output[res.output.index("{"):])["words"] == 2
    lines = [json.loads(line) for line in kavi_home.executions_log.read_text().splitlines()]
    assert [line.get("kind") for line in lines] == ["started", None]
    assert lines[0]["execution_id"] == lines[1]["execution_id"] and lines[1]["success"] is True
    assert "refusal" not in lines[1]  # a run that was not refused reads as records always did
