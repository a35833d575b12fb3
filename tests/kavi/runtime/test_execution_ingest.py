"""The execution log reaches the ledger incrementally and idempotently, tolerating malformed and torn lines."""

from pathlib import Path

from kavi.ledger.store import Ledger
from kavi.runtime.ingest import ingest_execution_log
from kavi.runtime.records import ExecutionLog, ExecutionRecord
from kavi.skills.base import SideEffectClass


def _record(i: int) -> ExecutionRecord:
    return ExecutionRecord(session_id="s", skill_name="word_count", source_hash="ab" * 32,
                           side_effect_class=SideEffectClass.READ_ONLY, input_json="{}", output_json="{}",
                           success=True, started_at="2026-11-22T10:00:00+00:00",
                           finished_at="2026-11-22T10:00:01+00:00", duration_ms=float(i))


def test_incremental_idempotent_tolerant(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "l.duckdb")
    log_path = tmp_path / "executions.jsonl"
    log = ExecutionLog(log_path, fsync=False)
    for i in range(3):
        log.append(_record(i))
    with log_path.open("a") as fh:
        fh.write("this is not a record\n")
    first = ingest_execution_log(ledger, log_path)
    assert (first.inserted, first.malformed, first.total) == (3, 1, 3)
    again = ingest_execution_log(ledger, log_path)
    assert (again.inserted, again.read_lines, again.total) == (0, 0, 3)
    log.append(_record(3))
    with log_path.open("a") as fh:
        fh.write('{"torn": ')  # a line still being written waits for its newline
    more = ingest_execution_log(ledger, log_path)
    assert (more.inserted, more.total) == (1, 4)
    # Starting over (offset lost) inserts nothing twice.
    with ledger.connect() as con:
        con.execute("DELETE FROM ingest_offsets")
    assert ingest_execution_log(ledger, log_path).inserted == 0
