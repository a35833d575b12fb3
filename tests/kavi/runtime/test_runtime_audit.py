"""The audit cannot be bypassed: a started line before any skill code, refusals as records, records that never fail
on their content, nothing run when the log cannot be written, and input fields the schema does not name refused."""

import json
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from kavi.home import KaviHome
from kavi.ledger.store import Ledger
from kavi.lifecycle import Refusal
from kavi.runtime.errors import ClassNotAllowed, ExecutionLogError, SkillNotTrusted, TrustError
from kavi.runtime.executor import SkillRunner, closed_schema, list_skills
from kavi.runtime.http_client import FixtureHttp
from kavi.runtime.ingest import ingest_execution_log
from kavi.runtime.records import ExecutionLog, ExecutionRecord, StartRecord
from kavi.runtime.trust import TrustLoader
from tests.kavi.runtime.runtime_skills import ECHO, Registry

LONE = "\ud800"


def _lines(home: KaviHome) -> list[dict[str, Any]]:
    raw = home.executions_log.read_bytes()
    raw.decode("utf-8")  # the whole log is valid UTF-8
    return [json.loads(line) for line in raw.splitlines()]


def test_extra_field_with_a_lone_surrogate_is_refused_and_recorded(runner: SkillRunner, home: KaviHome) -> None:
    record = runner.run("write_note", {"path": "a.md", "content": "x", "extra": LONE}, confirmed=True)
    assert not (home.vault_dir / "a.md").exists()
    assert record.status == "REFUSED" and record.refusal == "SCHEMA" and not record.success
    assert record.error is not None
    assert record.error.startswith("InputValidationError: input does not match the schema of 'write_note': ")
    assert "extra: Extra inputs are not permitted" in record.error
    assert runner.log.read_all() == [record]
    assert record.input_data() == {"path": "a.md", "content": "x", "extra": LONE}  # the escape decodes back
    started, finished = _lines(home)
    assert started["kind"] == "started" and started["execution_id"] == finished["execution_id"]
    assert finished["refusal"] == "SCHEMA"


def test_a_surrogate_field_name_is_refused_and_recorded(runner: SkillRunner, home: KaviHome) -> None:
    record = runner.run("echo", {"text": "a", f"k{LONE}": 1}, confirmed=False)
    assert record.refusal == "SCHEMA" and not record.success
    assert record.error is not None and record.error.startswith("InputValidationError: ")
    record.error.encode("utf-8")
    assert runner.log.read_all() == [record]
    assert record.input_data() == {"text": "a", f"k{LONE}": 1}


def test_surrogates_in_named_fields_always_leave_a_record(runner: SkillRunner, home: KaviHome) -> None:
    echoed = runner.run("echo", {"text": f"a{LONE}b"}, confirmed=False)
    assert echoed.success and echoed.output_data() == {"text": f"a{LONE}b", "length": 3}
    # The write fails (a vault file is UTF-8), and the failure is recorded.
    written = runner.run("write_note", {"path": "s.md", "content": LONE}, confirmed=True)
    assert not written.success and written.refusal is None
    back = runner.log.read_all()
    assert [r.execution_id for r in back] == [echoed.execution_id, written.execution_id]
    assert back[0].input_data() == {"text": f"a{LONE}b"} and back[0].output_data() == echoed.output_data()
    assert len(_lines(home)) == 4


def test_a_record_with_surrogates_in_any_text_is_written(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "executions.jsonl", fsync=False)
    record = ExecutionRecord(session_id="s", skill_name="echo", source_hash="0" * 64, side_effect_class="READ_ONLY",
                             input_json=f'{{"t":"{LONE}"}}', output_json=None, success=False,
                             error=f"ValueError: bad {LONE}", started_at="2025-01-01T00:00:00+00:00",
                             finished_at="2025-01-01T00:00:01+00:00", duration_ms=1.0)
    log.append(record)
    [back] = log.read_all()
    assert back.error == "ValueError: bad \\ud800" and back.input_data() == {"t": LONE}


def test_nested_fields_the_schema_does_not_name_are_refused(registry: Registry, runner: SkillRunner) -> None:
    nested = textwrap.dedent(ECHO).replace(
        "class EchoInput(BaseModel):\n    text: str\n",
        "class Inner(BaseModel):\n    n: int = 0\n\n\n"
        "class EchoInput(BaseModel):\n    text: str\n    inner: Inner = Inner()\n")
    registry.install("echo", nested)
    assert runner.run("echo", {"text": "a", "inner": {"n": 2}}, confirmed=False).success
    record = runner.run("echo", {"text": "a", "inner": {"n": 2, "m": 3}}, confirmed=False)
    assert record.refusal == "SCHEMA" and "inner.m: Extra inputs are not permitted" in str(record.error)


def test_published_input_schemas_are_closed(registry: Registry, loader: TrustLoader) -> None:
    infos = {i.name: i for i in list_skills(registry.values(), loader=loader)}
    schema = infos["write_note"].input_schema
    assert schema is not None and schema["additionalProperties"] is False

    class Inner(BaseModel):
        n: int

    class Outer(BaseModel):
        inner: Inner
        items: list[Inner] = []
        maybe: Inner | None = None
        counts: dict[str, int] = {}

    closed = closed_schema(Outer.model_json_schema())
    assert closed["additionalProperties"] is False
    assert closed["$defs"]["Inner"]["additionalProperties"] is False
    assert closed["properties"]["counts"]["additionalProperties"] == {"type": "integer"}  # a mapping stays open
    assert "additionalProperties" not in closed["properties"]["items"]


def test_every_run_starts_durably_before_the_skill_runs(make_runner: Callable[..., SkillRunner],
                                                        home: KaviHome) -> None:
    seen: list[list[dict[str, Any]]] = []

    class Watching(FixtureHttp):
        def get_json(self, url: str, params: Mapping[str, str] | None = None) -> Any:
            seen.append(_lines(home))  # what the log held when the skill made its call
            return super().get_json(url, params)

    runner = make_runner(http=Watching({"https://weather.example/api?city=Oslo": {"temp_c": 1.0}}))
    record = runner.run("fetch_weather", {"city": "Oslo"}, confirmed=True, caller="mcp:t/1")
    assert record.success
    [before] = seen
    assert [line.get("kind") for line in before] == ["started"]
    start = StartRecord.model_validate(before[0])
    assert start.execution_id == record.execution_id and start.source_hash == record.source_hash
    assert start.caller == "mcp:t/1" and len(start.input_sha256) == 64
    assert runner.log.unfinished() == []


def test_a_start_without_its_end_is_unfinished_and_readers_skip_it(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "executions.jsonl", fsync=False)
    start = StartRecord(execution_id="e" * 32, session_id="s" * 32, skill_name="echo", source_hash="0" * 64,
                        side_effect_class="READ_ONLY", input_sha256="1" * 64, started_at="2025-01-01T00:00:00+00:00")
    log.append(start)
    # An old record (no refusal field, no started line before it) reads as it always did.
    old = ('{"v":1,"execution_id":"' + "a" * 32 + '","parent_execution_id":null,"replay_of":null,"session_id":"'
           + "s" * 32 + '","skill_name":"echo","source_hash":"' + "0" * 64 + '","side_effect_class":"READ_ONLY",'
           '"input_json":"{}","output_json":"{}","success":true,"error":null,'
           '"started_at":"2025-01-01T00:00:00+00:00","finished_at":"2025-01-01T00:00:01+00:00","duration_ms":1.0}\n')
    with log.path.open("a") as fh:
        fh.write(old)
    records, stats = log.read_with_stats()
    assert [r.execution_id for r in records] == ["a" * 32] and stats.malformed == 0
    assert records[0].status == "ok" and records[0].refusal is None
    assert log.unfinished() == [start]


def test_ingest_takes_records_and_skips_started_lines(runner: SkillRunner, home: KaviHome) -> None:
    runner.run("echo", {"text": "a"}, confirmed=False)
    runner.run("echo", {"text": "a", "extra": 1}, confirmed=False)
    out = ingest_execution_log(Ledger(home.ledger_path), home.executions_log)
    assert (out.read_lines, out.inserted, out.malformed) == (4, 2, 0)


def test_unwritable_log_means_nothing_runs(make_runner: Callable[..., SkillRunner], home: KaviHome) -> None:
    runner = make_runner()
    runner.log = ExecutionLog(home.root / "log-is-a-directory", fsync=True)
    runner.log.path.mkdir()
    with pytest.raises(ExecutionLogError, match=r"the execution log \(log-is-a-directory\) could not be written"):
        runner.run("write_note", {"path": "n.md", "content": "x"}, confirmed=True)
    assert not (home.vault_dir / "n.md").exists()


def test_refusal_kinds_leave_records(runner: SkillRunner, registry: Registry, home: KaviHome) -> None:
    echo = registry["echo"]
    # Not served here: the class is refused before anything is loaded.
    with pytest.raises(ClassNotAllowed, match="not served") as info:
        runner.run("write_note", {"path": "n.md", "content": "x"}, confirmed=True,
                   admit=lambda s: None if s.side_effect_class == "READ_ONLY" else "write_note is not served")
    assert info.value.record is not None and info.value.record.refusal == "CLASS_NOT_ALLOWED"
    # A version the ledger knows but will not run: the refusal carries it, and it is recorded.
    revoked = SkillNotTrusted("skill 'echo@1' is not trusted: it is REVOKED (bad)", skill=echo, kind=Refusal.REVOKED)
    suspect = SkillNotTrusted("skill 'echo': its latest version echo@2 is SUSPECT", skill=echo, kind=Refusal.SUSPECT)
    for refusal in (revoked, suspect):

        def refuse(_: str, exc: SkillNotTrusted = refusal) -> None:
            raise exc

        refusing = SkillRunner(home, refuse, runner.log, loader=runner.loader)
        with pytest.raises(SkillNotTrusted):
            refusing.run("echo", {"text": "a"}, confirmed=False)
    # Tampered.
    echo.path.write_text(textwrap.dedent(ECHO) + "\n# edited\n", encoding="utf-8")
    with pytest.raises(TrustError):
        runner.run("echo", {"text": "a"}, confirmed=False)
    records = runner.log.read_all()
    assert [(r.skill_name, r.refusal) for r in records] == [
        ("write_note", "CLASS_NOT_ALLOWED"), ("echo", "REVOKED"), ("echo", "SUSPECT"), ("echo", "TAMPERED")]
    assert all(r.status == "REFUSED" and not r.success and r.output_json is None for r in records)
    assert all(str(home.root) not in str(r.error) for r in records)
    assert not (home.vault_dir / "n.md").exists()
    # A refusal before the start is one line; a tampered file is refused after its start.
    kinds = [line.get("kind", line.get("refusal")) for line in _lines(home)]
    assert kinds == ["CLASS_NOT_ALLOWED", "REVOKED", "SUSPECT", "started", "TAMPERED"]
    assert all(isinstance(r, ExecutionRecord) for r in records)


def test_messages_name_paths_relative_to_the_home(runner: SkillRunner, registry: Registry, home: KaviHome) -> None:
    registry["echo"].path.unlink()
    with pytest.raises(TrustError, match="trusted skill file is missing") as info:
        runner.run("echo", {"text": "a"}, confirmed=False)
    message = str(info.value)
    assert str(home.root) not in message
    assert str(registry["echo"].path.relative_to(home.root)) in message
