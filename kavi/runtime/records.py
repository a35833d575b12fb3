"""Execution records and their append-only JSONL log, ingested into the ledger: a `started` line, fsync'd before any
of the skill's code runs, and the record of the run when it ends (a refusal before the start is that record alone)."""

import contextlib
import fcntl
import hashlib
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from kavi.infrastructure import DISK_FULL_FIX, is_disk_full
from kavi.lifecycle import Refusal
from kavi.runtime.errors import ExecutionLogError
from kavi.runtime.text import SURROGATE as _SURROGATE
from kavi.runtime.text import escape_text
from kavi.skills.base import SideEffectClass

RECORD_VERSION: Literal[1] = 1
# model_dump_json writes fields in declaration order, so every line starts with this.
_RECORD_START = b'{"v":1,'
_STARTED_START = b'{"v":1,"kind":"started",'
# The log keeps an input or output whole up to this many characters of JSON; a larger one is kept as its SHA-256,
# its size and its first EXCERPT_CHARS characters (a 10 MB value would otherwise be a 10 MB log line, read again
# by every tail, replay and ingest). An error message is cut to EXCERPT_CHARS.
MAX_KEPT_JSON_CHARS = 64 * 1024
EXCERPT_CHARS = 4096
MAX_CALLER_CHARS = 200


class RecordNotFound(LookupError):
    """No execution record matches an id or prefix."""


class AmbiguousPrefix(LookupError):
    """An id prefix matches more than one execution record."""


def utc_now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def new_id() -> str:
    return uuid.uuid4().hex


def to_json(value: Any) -> str:
    """Compact, key-sorted JSON; values JSON cannot represent are shown with str() rather than lost, and lone
    surrogates are escaped."""
    return escape_text(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str))


class ValueDigest(BaseModel):
    """What the log keeps of a value too large to keep whole: the SHA-256 and size of its JSON, and its start."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str
    chars: int
    excerpt: str

    @classmethod
    def of(cls, text: str) -> "ValueDigest":
        return cls(sha256=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), chars=len(text),
                   excerpt=text[:EXCERPT_CHARS])


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
    input_json: str | None  # None only when the log kept input_digest instead
    output_json: str | None = None
    success: bool
    error: str | None = None
    started_at: str
    finished_at: str
    duration_ms: float
    input_digest: ValueDigest | None = None
    output_digest: ValueDigest | None = None
    # Who asked for the run when it was not the local CLI: an MCP client as `mcp:NAME/VERSION` (from its initialize
    # request). Absent from the log line when None, so records of `kavi run` read as they always did.
    caller: str | None = Field(default=None, max_length=MAX_CALLER_CHARS)
    # Set when the runtime refused the run (nothing of the skill's own work ran); absent from the line otherwise.
    refusal: Refusal | None = None
    # What the skill did through its handles (vault writes with path and digest, URLs fetched, secret names read,
    # model calls), in order; absent when it did nothing.
    effects: list[dict[str, Any]] | None = None
    # True when the run passed its deadline and its worker was killed; absent otherwise.
    timed_out: bool | None = None
    # Never in the log: why this record could not be written to it (a full disk). The call itself ran; its
    # `started` line is in the log.
    log_error: str | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _input_kept_or_digested(self) -> "ExecutionRecord":
        if self.input_json is None and self.input_digest is None:
            raise ValueError("a record without its input must carry input_digest")
        return self

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
        if self.refusal is not None:
            return "REFUSED"
        return "ok" if self.success else "FAIL"

    @property
    def input_kept(self) -> bool:
        """False when the log kept only a digest of the input (it was too large): such a run cannot be replayed."""
        return self.input_json is not None

    def input_data(self) -> Any:
        """The input; None when only its digest was kept."""
        return None if self.input_json is None else json.loads(self.input_json)

    def output_data(self) -> Any:
        return None if self.output_json is None else json.loads(self.output_json)

    def summary(self) -> dict[str, Any]:
        """The record's fields for `--json` output, with input and output decoded."""
        data = self.model_dump(mode="json")
        data["input"] = self.input_data()
        data["output"] = self.output_data()
        data["status"] = self.status
        return data

    def for_log(self) -> "ExecutionRecord":
        """The record as the log keeps it: a value over MAX_KEPT_JSON_CHARS becomes its digest, and a long error
        is cut, and lone surrogates in any text are escaped. The record a run returns keeps everything (a chain maps
        the whole output to its next step)."""
        update: dict[str, Any] = {name: escape_text(value) for name in _TEXT_FIELDS
                                  if isinstance(value := getattr(self, name), str) and _SURROGATE.search(value)}
        if update:
            return self.model_copy(update=update).for_log()
        if self.input_json is not None and len(self.input_json) > MAX_KEPT_JSON_CHARS:
            update.update(input_json=None, input_digest=ValueDigest.of(self.input_json))
        if self.output_json is not None and len(self.output_json) > MAX_KEPT_JSON_CHARS:
            update.update(output_json=None, output_digest=ValueDigest.of(self.output_json))
        if self.error is not None and len(self.error) > EXCERPT_CHARS:
            update["error"] = f"{self.error[:EXCERPT_CHARS]}... [{len(self.error) - EXCERPT_CHARS} more characters]"
        return self.model_copy(update=update) if update else self


_TEXT_FIELDS = ("execution_id", "parent_execution_id", "replay_of", "session_id", "skill_name", "source_hash",
                "input_json", "output_json", "error", "started_at", "finished_at", "caller")


class StartRecord(BaseModel):
    """The line written, and fsync'd, before any of a run's skill code runs: what is about to run, for whom, and a
    digest of its input. Its execution id is the one the run's record will carry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    v: Literal[1] = RECORD_VERSION
    kind: Literal["started"] = "started"
    execution_id: str
    parent_execution_id: str | None = None
    replay_of: str | None = None
    session_id: str
    skill_name: str
    skill_version: int | None = None
    source_hash: str
    side_effect_class: SideEffectClass
    input_sha256: str
    started_at: str
    caller: str | None = Field(default=None, max_length=MAX_CALLER_CHARS)


def input_sha256(input_json: str) -> str:
    return hashlib.sha256(input_json.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class ReadStats:
    """How many lines of the log could not be read as records (torn writes, hand edits)."""

    malformed: int = 0


def _parse_line(raw: bytes) -> ExecutionRecord | None:
    try:
        return ExecutionRecord.model_validate_json(raw)
    except (ValidationError, ValueError):
        return None


def parse_log_line(raw: bytes) -> ExecutionRecord | StartRecord | None:
    """One line of the log: a run's record, a `started` line, or None when it is neither (torn, edited)."""
    if raw.startswith(_STARTED_START):
        try:
            return StartRecord.model_validate_json(raw)
        except (ValidationError, ValueError):
            return None
    return _parse_line(raw)


class ExecutionLog:
    """Append-only JSONL of ExecutionRecords; each append is one write of one full line, fsync'd by default."""

    def __init__(self, path: Path, fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.last_stats = ReadStats()

    def append(self, record: ExecutionRecord | StartRecord) -> None:
        """Write one line and fsync it; ExecutionLogError when that cannot be done (the line was not written)."""
        if isinstance(record, StartRecord):
            absent = {"caller"} if record.caller is None else set()
            kept: BaseModel = record
        else:
            kept = record.for_log()
            # The optional fields appear only on records that need them, so every other line reads as it always did.
            absent = {name for name in ("input_digest", "output_digest", "caller", "refusal", "effects", "timed_out")
                      if getattr(kept, name) is None}
        try:
            line = (kept.model_dump_json(exclude=absent) + "\n").encode("utf-8")
            self._write(line)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            if is_disk_full(exc):
                reason = f"the disk is full: {DISK_FULL_FIX}"
            raise ExecutionLogError(f"the execution log ({self.path.name}) could not be written: {reason}") from None

    def _write(self, line: bytes) -> None:
        """Append `line` whole or not at all: under an exclusive lock (writers of other processes wait), from the
        end as it was; a write that stops short (a full disk) is cut back to that end, so no half line is left
        for the next record to be glued onto."""
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags, 0o600)
        except FileNotFoundError:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            end = os.fstat(fd).st_size
            try:
                # One write of one full line; a short one (a full disk, a signal) is finished or undone.
                written = os.write(fd, line)
                rest = memoryview(line)[written:]
                while rest:
                    rest = rest[os.write(fd, rest) :]
                if self.fsync:
                    os.fsync(fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, end)
                raise
        finally:
            os.close(fd)  # the lock goes with it

    def iter_lines(self) -> Iterator[ExecutionRecord | StartRecord]:
        """Records and `started` lines in file order; malformed lines are skipped and counted in `last_stats`."""
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
                record = parse_log_line(raw)
                if record is None:
                    malformed += 1
                    # A crash can leave a torn line without its newline, and the next append is then glued
                    # onto it. Every line starts with the same prefix, so the glued line is recovered.
                    start = raw.rfind(_RECORD_START)
                    record = parse_log_line(raw[start:]) if start > 0 else None
                if record is not None:
                    yield record
        self.last_stats = ReadStats(malformed=malformed)

    def iter_records(self) -> Iterator[ExecutionRecord]:
        """The runs' records in file order (`started` lines left out); malformed lines are counted in `last_stats`."""
        for line in self.iter_lines():
            if isinstance(line, ExecutionRecord):
                yield line

    def unfinished(self) -> list[StartRecord]:
        """Runs that started and have no record of their end (the process died, or the record could not be written)."""
        started: dict[str, StartRecord] = {}
        for line in self.iter_lines():
            if isinstance(line, StartRecord):
                started[line.execution_id] = line
            else:
                started.pop(line.execution_id, None)
        return list(started.values())

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
            raise RecordNotFound(f"no execution matches {prefix!r} in {self.path.name}")
        if len(matches) > 1:
            shown = sorted(matches.values(), key=lambda r: r.started_at)
            lines = [f"{r.execution_id}  {r.skill_name}  {r.started_at}" for r in shown[:10]]
            more = f"\n  ... and {len(shown) - 10} more" if len(shown) > 10 else ""
            raise AmbiguousPrefix(
                f"execution prefix {prefix!r} is ambiguous; {len(shown)} candidates:\n  " + "\n  ".join(lines) + more
            )
        return next(iter(matches.values()))
