"""Short-lived ledger connections: one per unit of work, retried on DuckDB's one-writer lock, always closed."""

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from kavi_assets.ledger.schema import MIGRATIONS, SCHEMA_VERSION


class LedgerLockedError(RuntimeError):
    """The ledger stayed locked by another process for longer than the retry budget."""


class LedgerSchemaError(RuntimeError):
    """The ledger file was written by a newer forge (its schema is ahead of this code)."""


def _is_lock_conflict(err: BaseException) -> bool:
    text = str(err)
    return "lock" in text.lower() and ("Conflicting" in text or "Could not set lock" in text)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Ledger:
    """The ledger file. Every call opens its own connection inside a transaction and closes it in `finally`.

    DuckDB allows one writing process per file and refuses even readers while a writer holds it, so both
    reads and writes retry with exponential backoff and jitter until `lock_timeout_s` is spent.
    """

    def __init__(self, path: Path, *, lock_timeout_s: float = 30.0, migrate: bool = True) -> None:
        self.path = path
        self.lock_timeout_s = lock_timeout_s
        self._migrated = False
        if migrate:
            self.migrate()

    def _open(self, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.005
        attempts = 0
        while True:
            attempts += 1
            try:
                return duckdb.connect(str(self.path), read_only=read_only)
            except duckdb.Error as err:
                if not _is_lock_conflict(err):
                    raise
                if time.monotonic() >= deadline:
                    raise LedgerLockedError(
                        f"the ledger {self.path} is locked by another process "
                        f"(gave up after {attempts} tries over {self.lock_timeout_s:.0f}s); "
                        "is a long-running writer holding it open?"
                    ) from None
                # Full jitter keeps two waiting processes from retrying in lockstep.
                time.sleep(random.uniform(0, delay))
                delay = min(delay * 2, 0.5)

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A transaction: committed when the block ends, rolled back on error, closed in every case."""
        con = self._open()
        try:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        finally:
            con.close()

    def migrate(self) -> int:
        if self._migrated:
            return SCHEMA_VERSION
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.connect() as con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)"
            )
            row = con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
            current = int(row[0]) if row else 0
            if current > SCHEMA_VERSION:
                raise LedgerSchemaError(
                    f"the ledger {self.path} has schema version {current}, newer than this forge's "
                    f"{SCHEMA_VERSION}; upgrade kavi-forge"
                )
            for version, statements in MIGRATIONS:
                if version <= current:
                    continue
                for stmt in statements:
                    con.execute(stmt)
                con.execute("INSERT INTO schema_version VALUES (?, ?)", [version, utcnow()])
        self._migrated = True
        return SCHEMA_VERSION

    def schema_version(self) -> int:
        with self.connect() as con:
            row = con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
        return int(row[0]) if row else 0
