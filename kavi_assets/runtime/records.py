"""Execution records and their append-only JSONL log (one fsync'd line per run, ingested into the ledger)."""

import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kavi_assets.skills.base import SideEffectClass

RECORD_VERSION: Literal[1] = 1
# model_dump_json writes fields in declaration order, so every line starts with this.
_RECORD_START = b'{"v":1,'


class RecordNotFound(LookupError):
    """No execution record matches an id or prefix."""


class AmbiguousPrefix(LookupError):
    """An id prefix matches more than one execution record."""


def utc_now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def new_id() -> str:
    return uuid.uuid4().hex


def to_json(value: Any) -> str:
    """Compact, key-sorted JSON; values JSON cannot represent are shown with str() rather than lost."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class ExecutionRecord(BaseModel):
    """One run of a trusted skill: what ran (name and source hash), with what, what came out, and when."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    v: Literal[1] = RECORD_VERSION
    execution_id: str = Field(default_factory=new_id)
    parent_execution_id: str | None = None
    replay_of: str | None = None
    session_id: str
    skill_name: str
    source_hash: str
    side_effect_class: SideEffectClass
    skill_version: int | None = None  # the trusted version that ran (absent in records made before versions)
    input_json: str
    output_json: str | None = None
    success: bool
    error: str | None = None
    started_at: str
    finished_at: str
    duration_ms: float

    @field_validator("started_at", "finished_at")
    @classmethod
    def _utc_iso(cls, value: str) -> str:
        if datetime.fromisoformat(value).utcoffset() != timedelta(0):
            raise ValueError(f"timestamp {value!r} must be ISO 8601 in UTC")
        return value

    @property
    def short_id(self) -> str:
        return self.execution_id[:8]

    @property
    def status(self) -> str:
        return "ok" if self.success else "FAIL"

    def input_data(self) -> Any:
        return json.loads(self.input_json)

    def output_data(self) -> Any:
        return None if self.output_json is None else json.loads(self.output_json)

    def summary(self) -> dict[str, Any]:
        """The record's fields for `--json` output, with input and output decoded."""
        data = self.model_dump(mode="json")
        data["input"] = self.input_data()
        data["output"] = self.output_data()
        data["status"] = self.status
        return data


@dataclass(frozen=True)
class ReadStats:
    """How many lines of the log could not be read as records (torn writes, hand edits)."""

    malformed: int = 0


def _parse_line(raw: bytes) -> ExecutionRecord | None:
    try:
        return ExecutionRecord.model_validate_json(raw)
    except (ValidationError, ValueError):
        return None


class ExecutionLog:
    """Append-only JSONL of ExecutionRecords; each append is one write of one full line, fsync'd by default."""

    def __init__(self, path: Path, fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.last_stats = ReadStats()

    def append(self, record: ExecutionRecord) -> None:
        line = (record.model_dump_json() + "\n").encode("utf-8")
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags, 0o600)
        except FileNotFoundError:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, flags, 0o600)
        try:
            # One write of one full line: O_APPEND places it at the end even with concurrent writers.
            written = os.write(fd, line)
            if written != len(line):
                # Regular files only write short on a full disk or a signal; finish the line regardless.
                rest = memoryview(line)[written:]
                while rest:
                    rest = rest[os.write(fd, rest) :]
            if self.fsync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def iter_records(self) -> Iterator[ExecutionRecord]:
        """Records in file order; malformed lines are skipped and counted in `last_stats` when done."""
        malformed = 0
        try:
            fh = self.path.open("rb")
        except FileNotFoundError:
            self.last_stats = ReadStats()
            return
        with fh:
            for raw in fh:
                if not raw.strip():
                    continue
                record = _parse_line(raw)
                if record is None:
                    malformed += 1
                    # A crash can leave a torn line without its newline, and the next append is then glued
                    # onto it. Every record starts with the same prefix, so the glued record is recovered.
                    start = raw.rfind(_RECORD_START)
                    record = _parse_line(raw[start:]) if start > 0 else None
                if record is not None:
                    yield record
        self.last_stats = ReadStats(malformed=malformed)

    def read_all(self) -> list[ExecutionRecord]:
        return list(self.iter_records())

    def read_with_stats(self) -> tuple[list[ExecutionRecord], ReadStats]:
        records = self.read_all()
        return records, self.last_stats

    def find(self, prefix: str) -> ExecutionRecord:
        """The record whose id is `prefix` or the only one starting with it."""
        wanted = prefix.strip().lower()
        if not wanted:
            raise RecordNotFound("an execution id or prefix is required")
        matches: dict[str, ExecutionRecord] = {}
        for record in self.iter_records():
            if record.execution_id == wanted:
                return record
            if record.execution_id.startswith(wanted):
                matches.setdefault(record.execution_id, record)
        if not matches:
            raise RecordNotFound(f"no execution matches {prefix!r} in {self.path}")
        if len(matches) > 1:
            shown = sorted(matches.values(), key=lambda r: r.started_at)
            lines = [f"{r.execution_id}  {r.skill_name}  {r.started_at}" for r in shown[:10]]
            more = f"\n  ... and {len(shown) - 10} more" if len(shown) > 10 else ""
            raise AmbiguousPrefix(
                f"execution prefix {prefix!r} is ambiguous; {len(shown)} candidates:\n  " + "\n  ".join(lines) + more
            )
        return next(iter(matches.values()))
