"""Ingest the execution log (JSONL) into the ledger: incremental by byte offset, idempotent by execution id; the
runs' records are ingested, their `started` lines are not."""

from dataclasses import dataclass
from pathlib import Path

from kavi.ledger.store import Ledger, utcnow
from kavi.runtime.records import ExecutionRecord, parse_log_line

# Named, not positional: later migrations add columns (skill_version, caller) to the end of the table.
_COLUMNS = ("execution_id, parent_execution_id, replay_of, session_id, skill_name, source_hash, side_effect_class, "
            "input_json, output_json, success, error, started_at, finished_at, duration_ms, skill_version, caller")


@dataclass(frozen=True)
class IngestResult:
    read_lines: int
    inserted: int
    malformed: int
    offset: int
    total: int


def ingest_execution_log(ledger: Ledger, log_path: Path) -> IngestResult:
    source = str(log_path.resolve())
    with ledger.connect() as con:
        row = con.execute("SELECT byte_offset FROM ingest_offsets WHERE source = ?", [source]).fetchone()
    offset = int(row[0]) if row else 0
    if not log_path.exists():
        return IngestResult(0, 0, 0, offset, 0)
    with log_path.open("rb") as fh:
        size = fh.seek(0, 2)
        if size < offset:  # the log was truncated or replaced: start over, ids keep it idempotent
            offset = 0
        fh.seek(offset)
        chunk = fh.read()
    end = chunk.rfind(b"\n") + 1  # a torn last line waits for its newline
    lines = chunk[:end].splitlines()
    records: list[ExecutionRecord] = []
    malformed = 0
    for raw in lines:
        if not raw.strip():
            continue
        line = parse_log_line(raw)
        if isinstance(line, ExecutionRecord):
            records.append(line)
        elif line is None:
            malformed += 1  # a `started` line is not a run's record: its run's record follows it
    rows = [
        [r.execution_id, r.parent_execution_id, r.replay_of, r.session_id, r.skill_name, r.source_hash,
         r.side_effect_class.value, r.input_json, r.output_json, r.success, r.error, r.started_at, r.finished_at,
         r.duration_ms, r.skill_version, r.caller]
        for r in records
    ]
    with ledger.connect() as con:
        before = con.execute("SELECT count(*) FROM executions").fetchone()
        if rows and ledger.lake is None:
            con.executemany(f"INSERT OR IGNORE INTO executions ({_COLUMNS}) VALUES ({', '.join('?' * len(rows[0]))})",
                            rows)
        elif rows:
            # The shared ledger (DuckLake) has no keys for OR IGNORE to act on: the id is checked in the statement.
            con.executemany(f"INSERT INTO executions ({_COLUMNS}) SELECT {', '.join('?' * len(rows[0]))} "
                            "WHERE NOT EXISTS (SELECT 1 FROM executions WHERE execution_id = ?)",
                            [[*r, r[0]] for r in rows])
        after = con.execute("SELECT count(*) FROM executions").fetchone()
        if ledger.lake is None:
            con.execute("INSERT OR REPLACE INTO ingest_offsets VALUES (?, ?, ?)", [source, offset + end, utcnow()])
        else:
            con.execute("DELETE FROM ingest_offsets WHERE source = ?", [source])
            con.execute("INSERT INTO ingest_offsets VALUES (?, ?, ?)", [source, offset + end, utcnow()])
    b = int(before[0]) if before else 0
    a = int(after[0]) if after else 0
    return IngestResult(len(lines), a - b, malformed, offset + end, a)
