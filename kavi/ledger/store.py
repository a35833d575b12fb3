"""Short-lived ledger connections: one per unit of work, retried on DuckDB's one-writer lock, always closed."""

import atexit
import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import duckdb

from kavi.lake_config import LakeConfig, parse_lake
from kavi.ledger.attached import attach
from kavi.ledger.lake import (
    FunnelTimeout,
    funnel,
    is_commit_conflict,
    lake_cursor,
    lake_tables,
)
from kavi.ledger.schema import MIGRATIONS, SCHEMA_VERSION
from kavi.ledger.session_reads import SessionConnection
from kavi.ledger.wire import RemoteConnection, find_host
from kavi.settings import read_setting

T = TypeVar("T")


class LedgerLockedError(RuntimeError):
    """The ledger stayed locked by another process for longer than the retry budget."""


class LedgerCommitConflict(RuntimeError):
    """A shared (DuckLake) ledger refused a commit because a concurrent transaction changed the same table: nothing
    of the unit of work was written. `Ledger.unit_of_work` reruns the whole unit; elsewhere this is the error."""


class LedgerSchemaError(RuntimeError):
    """The ledger file was written by a newer forge (its schema is ahead of this code)."""


class LedgerCorruptError(RuntimeError):
    """The ledger file is not a readable DuckDB database (overwritten, truncated, or damaged)."""

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(
            f"the ledger {path} is corrupt or not a DuckDB database ({detail.strip()[:200]}): move it aside "
            f"(mv {path} {path}.corrupt) and restore it from a backup; without one, the next kavi command starts an "
            "empty ledger and every skill must be proposed and forged again"
        )
        self.path = path
        self.detail = detail.strip()[:200]


_CORRUPT = ("not a valid DuckDB database", "orrupt", "checksum", "is not a DuckDB", "invalid database")


def _is_corrupt(err: BaseException) -> bool:
    text = str(err)
    return isinstance(err, duckdb.IOException | duckdb.InternalException) and any(m in text for m in _CORRUPT)


def _is_lock_conflict(err: BaseException) -> bool:
    text = str(err)
    return "lock" in text.lower() and ("Conflicting" in text or "Could not set lock" in text)


# How long this process waited for the ledger's file lock (connections opened, retries, seconds waited
# per opening). With KAVI_LEDGER_STATS_DIR naming a folder, each process writes its figures there as it exits
# (<pid>.json): the parallel benchmark reads them from every run worker.
_MAX_WAITS = 100_000
lock_stats: dict[str, Any] = {"opens": 0, "retries": 0, "waits_s": []}


def _note_open(retries: int, waited_s: float) -> None:
    lock_stats["opens"] += 1
    lock_stats["retries"] += retries
    if len(lock_stats["waits_s"]) < _MAX_WAITS:
        lock_stats["waits_s"].append(round(waited_s, 6))


def _dump_stats() -> None:
    folder = Path(read_setting("ledger_stats_dir"))
    if lock_stats["opens"] and folder.is_dir():
        (folder / f"{os.getpid()}.json").write_text(json.dumps(lock_stats), encoding="utf-8")


if read_setting("ledger_stats_dir"):
    atexit.register(_dump_stats)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Ledger:
    """The ledger file. Every call opens its own connection inside a transaction and closes it in `finally`.

    DuckDB allows one writing process per file and refuses even readers while a writer holds it, so both
    reads and writes retry with exponential backoff and jitter until `lock_timeout_s` is spent.

    With `migrate` (the default) the schema is brought up to date inside the first transaction this object opens
    (a newer schema raises LedgerSchemaError there): constructing a Ledger costs no connection of its own.

    With KAVI_LEDGER_URL set (or `lake` given) the ledger is the shared DuckLake instead of the file at `path`
    (kavi/ledger/lake.py): same SQL, every unit of work funnelled through the catalog's advisory lock unless
    `funnel=False` (then only optimistic concurrency holds, and `unit_of_work` retries conflicting commits).
    """

    def __init__(self, path: Path, *, lock_timeout_s: float = 30.0, migrate: bool = True,
                 lake: LakeConfig | bool | None = True, funnel: bool = True) -> None:
        self.path = path
        self.lock_timeout_s = lock_timeout_s
        # True: from the environment (the default local file when KAVI_LEDGER_URL is unset); False: the file.
        self.lake: LakeConfig | None = (
            parse_lake(read_setting("ledger_url"), read_setting("ledger_data"), path.parent) if lake is True
            else None if lake is False else lake)
        self._funnel = funnel
        self._auto_migrate = migrate
        self._migrated = False
        self._local = threading.local()
        if migrate:
            path.parent.mkdir(parents=True, exist_ok=True)

    @property
    def label(self) -> str:
        """Where the ledger is, for messages (the shared ledger's label carries no password)."""
        return self.lake.label if self.lake is not None else str(self.path)

    def _guard(self) -> AbstractContextManager[None]:
        """The shared ledger's funnel around one unit of work; nothing for the file (DuckDB's own lock serialises)."""
        if self.lake is None or not self._funnel:
            return nullcontext()
        return _funnel_or_locked(self.lake, self.lock_timeout_s)

    def _open(self) -> duckdb.DuckDBPyConnection:
        if self.lake is not None:
            return lake_cursor(self.lake, self.path.parent / ".cache" / "duckdb-extensions")
        started = time.monotonic()
        deadline = started + self.lock_timeout_s
        delay = 0.005
        attempts = 0
        while True:
            attempts += 1
            remote = self._through_host(deadline - time.monotonic())
            if remote is not None:
                _note_open(attempts - 1, time.monotonic() - started)
                return remote
            try:
                con = cast(duckdb.DuckDBPyConnection, attach(str(self.path)))
                _note_open(attempts - 1, time.monotonic() - started)
                return con
            except duckdb.Error as err:
                if _is_corrupt(err):
                    raise LedgerCorruptError(self.path, str(err)) from None
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

    def _through_host(self, wait_s: float) -> duckdb.DuckDBPyConnection | None:
        """A unit of work at the ledger host, when one serves this file (kavi/ledger/host.py); None when
        none does (or it just went away): then the file itself."""
        sock = find_host(self.path)
        if sock is None:
            return None
        try:
            remote = RemoteConnection(sock, max(wait_s, 0.0))
        except TimeoutError:
            raise LedgerLockedError(f"the ledger {self.path} is busy: its host granted no unit of work within "
                                    f"{self.lock_timeout_s:.0f}s; is a long-running unit of work holding it?") from None
        except OSError:
            return None
        # It offers what the ledger code uses of a connection: execute/executemany, fetchall/fetchone, close.
        return cast(duckdb.DuckDBPyConnection, remote)

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A transaction: committed when the block ends, rolled back on error, closed in every case.

        Inside `session()` (same thread) it is the session's connection and transaction instead.
        """
        current: duckdb.DuckDBPyConnection | None = getattr(self._local, "con", None)
        if current is not None:
            yield current
            return
        with self._guard():
            con = self._open()
            try:
                con.execute("BEGIN TRANSACTION")
                migrating = self._auto_migrate and not self._migrated
                try:
                    # A ledger host of this code has brought the schema to this version already (ledger/host.py).
                    if migrating and getattr(con, "schema_version", None) != SCHEMA_VERSION:
                        self._migrate_in(con)
                    yield con
                except BaseException as err:
                    if _is_corrupt(err):
                        raise LedgerCorruptError(self.path, str(err)) from None
                    con.execute("ROLLBACK")
                    raise
                try:
                    con.execute("COMMIT")
                except duckdb.Error as err:
                    if self.lake is not None and is_commit_conflict(err):
                        raise LedgerCommitConflict(f"the shared ledger refused a commit that conflicts with a "
                                                   f"concurrent one ({str(err).strip().splitlines()[-1][:200]})") \
                            from None
                    raise
                if migrating:
                    self._migrated = True
            finally:
                con.close()

    def unit_of_work(self, fn: Callable[[duckdb.DuckDBPyConnection], T], *, attempts: int = 8) -> T:
        """Run `fn` in one transaction and rerun it whole when the commit conflicts (DuckLake's optimistic
        concurrency): `fn` must do all its reading inside, so a rerun decides again on the newer state. Inside a
        session the session is the unit: a conflict there is raised to its owner, never half-retried here."""
        if getattr(self._local, "con", None) is not None:
            with self.connect() as con:
                return fn(con)
        delay = 0.01
        for attempt in range(1, attempts + 1):
            try:
                with self.connect() as con:
                    return fn(con)
            except LedgerCommitConflict:
                if attempt == attempts:
                    raise
                time.sleep(random.uniform(0, delay))
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")

    @contextmanager
    def session(self) -> Iterator[None]:
        """One connection and one transaction for every ledger call in this block (same thread): the writes of a
        forge step land together, or not at all, and the step pays for one connection instead of one per call.

        Keep a session short: while it is open no other process can open the ledger. Never hold one across a
        model call or a gate run. Sessions nest (an inner session joins the outer one). A read repeated inside one
        is answered from the rows it gave before, until the session writes (kavi/ledger/session_reads.py).
        """
        if getattr(self._local, "con", None) is not None:
            yield
            return
        with self.connect() as con:
            self._local.con = SessionConnection(con)
            try:
                yield
            finally:
                self._local.con = None

    def migrate(self) -> int:
        """Bring the schema up to date now (otherwise it happens in the first transaction)."""
        if self._migrated:
            return SCHEMA_VERSION
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.connect() as con:
            if not self._auto_migrate:
                self._migrate_in(con)
        self._migrated = True
        return SCHEMA_VERSION

    def _migrate_in(self, con: duckdb.DuckDBPyConnection) -> None:
        """Apply the missing migrations inside the caller's transaction; reads only when the schema is current.

        Missing means not recorded: normally the versions after the newest one, but also any a diverging build of
        the forge migrated past (a file recording a later version without an earlier one). Those are applied in the
        same order; one that cannot apply to such a file stops with the versions missing, and nothing is changed."""
        exists = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version' "
            "AND table_schema = 'main' AND table_catalog = current_database()"
        ).fetchone()
        done: set[int] = set()
        if exists and exists[0]:
            done = {int(r[0]) for r in con.execute("SELECT DISTINCT version FROM schema_version").fetchall()}
        current = max(done, default=0)
        if current > SCHEMA_VERSION:
            raise LedgerSchemaError(
                f"the ledger {self.path} has schema version {current}, newer than this forge's "
                f"{SCHEMA_VERSION}; upgrade kavi-forge"
            )
        missing = [(version, statements) for version, statements in MIGRATIONS if version not in done]
        if not missing:
            return
        if self.lake is not None:
            self._migrate_lake_in(con, current)
            return
        con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
        try:
            for version, statements in missing:
                for stmt in statements:
                    con.execute(stmt)
                con.execute("INSERT INTO schema_version VALUES (?, ?)", [version, utcnow()])
        except duckdb.Error as err:
            gaps = [version for version, _ in missing if version < current]
            if not gaps:
                raise
            raise LedgerSchemaError(
                f"the ledger {self.path} records schema versions up to {current} but not {gaps} (it was migrated by "
                f"diverging builds of the forge), and they cannot be applied to it now ({type(err).__name__}: "
                f"{str(err).splitlines()[0][:200]}); move it aside to start a new ledger, or restore a backup"
            ) from None

    def _migrate_lake_in(self, con: duckdb.DuckDBPyConnection, current: int) -> None:
        """DuckLake has no keys and no indexes: a new lake is created at the current schema (the tables the
        migrations leave, rebuilt without their constraints); a lake behind is brought up by the newer migrations'
        statements, index statements skipped (the ledger's code keeps keys unique, as it does for the file)."""
        now = utcnow()
        if current == 0:
            con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TIMESTAMPTZ)")
            for stmt in lake_tables():
                con.execute(stmt)
            for version, _ in MIGRATIONS:
                con.execute("INSERT INTO schema_version VALUES (?, ?)", [version, now])
            return
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            for stmt in statements:
                if " INDEX " in f" {stmt.strip().upper()} "[:40]:
                    continue
                try:
                    con.execute(stmt)
                except duckdb.NotImplementedException as err:
                    raise LedgerSchemaError(f"the shared ledger cannot apply migration {version} ({err}); "
                                            "it needs a DuckLake form of that migration") from None
            con.execute("INSERT INTO schema_version VALUES (?, ?)", [version, now])

    def schema_version(self) -> int:
        with self.connect() as con:
            row = con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
        return int(row[0]) if row else 0



@contextmanager
def _funnel_or_locked(cfg: LakeConfig, timeout_s: float) -> Iterator[None]:
    """The funnel, its timeout reported as the ledger's usual LedgerLockedError (the CLI's one-line message)."""
    try:
        with funnel(cfg, timeout_s):
            yield
    except FunnelTimeout as err:
        raise LedgerLockedError(str(err)) from None
