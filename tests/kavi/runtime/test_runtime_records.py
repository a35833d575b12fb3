"""Execution records: the fsync'd JSONL log, tolerant reading, prefix lookup."""

import os
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from kavi.runtime.records import (
    AmbiguousPrefix,
    ExecutionLog,
    ExecutionRecord,
    ReadStats,
    RecordNotFound,
    utc_now_iso,
)
from kavi.skills.base import SideEffectClass


def _record(execution_id: str | None = None, **overrides: object) -> ExecutionRecord:
    now = utc_now_iso()
    fields: dict[str, object] = {
        "session_id": "s" * 32,
        "skill_name": "echo",
        "source_hash": "a" * 64,
        "side_effect_class": SideEffectClass.READ_ONLY,
        "input_json": '{"text":"hi"}',
        "output_json": '{"length":2,"text":"hi"}',
        "success": True,
        "started_at": now,
        "finished_at": now,
        "duration_ms": 1.5,
    }
    if execution_id is not None:
        fields["execution_id"] = execution_id
    fields.update(overrides)
    return ExecutionRecord.model_validate(fields)


def test_record_defaults_and_helpers() -> None:
    record = _record()
    assert record.v == 1
    assert len(record.execution_id) == 32 and int(record.execution_id, 16) >= 0
    assert record.short_id == record.execution_id[:8]
    assert record.status == "ok"
    assert record.input_data() == {"text": "hi"}
    assert record.summary()["output"] == {"length": 2, "text": "hi"}
    with pytest.raises(ValidationError, match="UTC"):
        _record(started_at="2024-01-01T10:00:00+02:00")
    with pytest.raises(ValidationError):
        _record(v=2)


def test_append_and_read_back_with_fsync(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "sub" / "executions.jsonl")
    first, second = _record(), _record(success=False, error="ValueError: x", output_json=None)
    log.append(first)
    log.append(second)
    assert log.read_all() == [first, second]
    assert stat.S_IMODE(os.stat(log.path).st_mode) == 0o600
    assert log.path.read_text(encoding="utf-8").count("\n") == 2


def test_missing_log_reads_empty(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "none.jsonl")
    assert log.read_all() == []
    assert log.last_stats == ReadStats(malformed=0)


def test_malformed_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "executions.jsonl", fsync=False)
    good = _record()
    log.append(good)
    with log.path.open("a", encoding="utf-8") as fh:
        fh.write("not json at all\n")
        fh.write('{"v": 1, "execution_id": "x"}\n')
        fh.write("\n")
        fh.write('{"torn": ')  # a crash in the middle of a write: no newline
    later = _record()
    log.append(later)
    records, stats = log.read_with_stats()
    # The torn line and the record appended onto it share a line: the record is recovered.
    assert records == [good, later]
    assert stats == ReadStats(malformed=3)
    assert '{"torn": {"v":1,' in log.path.read_text(encoding="utf-8")


def test_find_by_full_id_prefix_ambiguous_and_missing(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "executions.jsonl", fsync=False)
    a = _record("abc1" + "0" * 28)
    b = _record("abc2" + "0" * 28, skill_name="other")
    c = _record("ffff" + "0" * 28)
    for r in (a, b, c):
        log.append(r)
    assert log.find(a.execution_id) == a
    assert log.find("abc2") == b
    assert log.find("FFF") == c
    with pytest.raises(AmbiguousPrefix) as info:
        log.find("abc")
    message = str(info.value)
    assert "ambiguous; 2 candidates" in message
    assert a.execution_id in message and b.execution_id in message and "other" in message
    with pytest.raises(RecordNotFound, match="no execution matches '999'"):
        log.find("999")
    with pytest.raises(RecordNotFound, match="required"):
        log.find("  ")
