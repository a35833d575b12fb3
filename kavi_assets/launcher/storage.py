"""Dagster's SQLite instance storage, the same files and schema, with one SQLAlchemy engine per database file.

Dagster's SQLite run and event-log storages build a new SQLAlchemy engine for every connection and drop it after:
each event a run writes (a forge run writes about 70, most of them twice, to its own shard and to the index) pays
for building the engine and, since SQLAlchemy caches compiled statements per engine, for compiling its statement
again. Measured here, that was about a fifth of a forge run's CPU in the run worker and most of the cost of
queuing a run. These subclasses keep the engine (with no pool: every connection is still opened and closed as
before, so locking, WAL and other processes see exactly what they saw) and remember the tables they found.

Two more costs of a connection per statement, with eight runs at once: a commit waits on the disk (SQLite's default
FULL sync writes the WAL to disk at every commit) and a close may checkpoint (the last connection to a WAL database
to close checkpoints it into the database file and deletes the WAL), with the cores idle (README, "Forging many at
once", has the figures). So connections commit with `synchronous=NORMAL`, SQLite's advice for WAL: a commit is durable
once written, synced at checkpoints, and the database is never corrupted; a power loss (not a crash of the process)
may lose the last transactions of Dagster's own run records, never the ledger's. And a run worker holds one idle
connection to each database it writes (`hold_connections`), so its own connections' closes are never the last.

`dagster.yaml` names KaviSqliteStorage under `storage: custom` with DAGSTER_HOME as its folder: the runs, the event
log shards and the schedules stay where Dagster's default SQLite storage keeps them, so a home written before (or
opened by plain Dagster) reads the same. PostgreSQL instances (the scale configuration) do not use it.
"""

import contextlib
import functools
import os
import sqlite3
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import sqlalchemy as db
import yaml
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from dagster._core.storage.event_log.schema import SqlEventLogStorageMetadata
from dagster._core.storage.event_log.sqlite import sqlite_event_log
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.schedules.sqlite.sqlite_schedule_storage import SqliteScheduleStorage
from dagster._core.storage.sql import create_engine, get_alembic_config, safe_commit
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS, create_db_conn_string
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._serdes import ConfigurableClassData
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

MODULE = "kavi_assets.launcher.storage"
MAX_ENGINES = 64  # a webserver reading many runs' shards keeps the most recent ones
MAX_HELD = 8  # a run worker writes its own shard, the index shard and runs.db


def _synchronous_normal(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.execute("PRAGMA synchronous=NORMAL")


_holding_pid: int | None = None


def hold_connections() -> None:
    """For this process only (not for its forks): keep one idle connection open to each WAL database it connects
    to, for the rest of its life. Then the connections Dagster opens and closes per statement are never the last
    one to close, and none of their closes checkpoints the WAL (the WAL still checkpoints itself every 1000 pages,
    at a commit). For a process that ends without closing them (a forked run worker ends with os._exit) and
    whose databases are not deleted or replaced while it lives (a run's own shard, the index shard, runs.db)."""
    global _holding_pid
    _holding_pid = os.getpid()


def holding_connections() -> bool:
    return _holding_pid == os.getpid()


@contextmanager
def connections_held() -> Iterator[None]:
    """Hold connections (as `hold_connections`) while a run executes in this process, and close the idle ones when
    it ends: each database's WAL is then checkpointed once, by that last close, instead of at every event's. In a
    process that holds for its whole life (a run worker) this changes nothing."""
    global _holding_pid
    if holding_connections():
        yield
        return
    _holding_pid = os.getpid()
    try:
        yield
    finally:
        _holding_pid = None
        for engines in list(_ENGINES):
            engines.release()


_ENGINES: "weakref.WeakSet[Engines]" = weakref.WeakSet()  # this process's, for `connections_held` to release


class Engines:
    """Engines by database URL for this process, least recently used dropped past `limit`. A forked child starts
    with none of its parent's (they hold no connection, but the child builds its own)."""

    def __init__(self, limit: int = MAX_ENGINES, **kwargs: Any) -> None:
        self._limit = limit
        self._kwargs = kwargs
        self._lock = threading.Lock()
        self._by_url: OrderedDict[str, Engine] = OrderedDict()
        self._held: dict[str, sqlite3.Connection | None] = {}
        self._pid = os.getpid()
        _ENGINES.add(self)

    def get(self, url: str) -> Engine:
        with self._lock:
            if self._pid != os.getpid():
                self._by_url = OrderedDict()
                self._held = {}  # the parent's (a holding parent's fork holds its own, if it asks to)
                self._pid = os.getpid()
            engine = self._by_url.get(url)
            if engine is not None:
                self._by_url.move_to_end(url)
                return engine
            engine = create_engine(url, poolclass=NullPool, **self._kwargs)
            db.event.listen(engine, "connect", _synchronous_normal)
            self._by_url[url] = engine
            while len(self._by_url) > self._limit:
                _url, old = self._by_url.popitem(last=False)
                old.dispose()
            return engine

    def __len__(self) -> int:
        return len(self._by_url)

    def hold(self, engine: Engine) -> None:
        """After a connection to `engine`'s database succeeded: in a process that holds connections, open its idle
        connection once (only to a database in WAL mode; never more than MAX_HELD)."""
        if not holding_connections():
            return
        path = engine.url.database
        with self._lock:
            if not path or path in self._held or len(self._held) >= MAX_HELD:
                return
            self._held[path] = None
            try:
                keeper = sqlite3.connect(path, timeout=SQLITE_BUSY_TIMEOUT_SECONDS, check_same_thread=False)
            except sqlite3.Error:
                return
            try:
                # A read opens the WAL (and with it the shared lock that keeps other closes from checkpointing);
                # it ends with the statement, so the connection holds no snapshot.
                (mode,) = keeper.execute("PRAGMA journal_mode").fetchone()
            except sqlite3.Error:
                mode = ""
            if str(mode).lower() == "wal":
                self._held[path] = keeper
            else:
                keeper.close()  # not a WAL database: its closes do not checkpoint, nothing to hold

    def release(self) -> None:
        """Close this process's idle connections (the last close of a WAL database checkpoints it)."""
        with self._lock:
            held, self._held = self._held, {}
            if self._pid != os.getpid():
                return  # a fork's copies of the parent's: the parent closes them
        for keeper in held.values():
            if keeper is not None:
                with contextlib.suppress(sqlite3.Error):
                    keeper.close()

    def held(self) -> list[str]:
        return [path for path, keeper in self._held.items() if keeper is not None and self._pid == os.getpid()]


@functools.cache
def _scripts() -> ScriptDirectory:
    """Dagster's migration scripts, read once per process (and inherited by forked run workers): Dagster reads
    the 90-odd files again for every database it checks, which is most of the cost of opening an instance or a
    run's event shard."""
    return ScriptDirectory.from_config(get_alembic_config(sqlite_event_log.__file__))


def head_revision() -> str | None:
    """The newest schema revision of Dagster's storage (the same scripts serve runs, events and schedules)."""
    head = _scripts().as_revision_number("head")
    return head if isinstance(head, str) else None


def at_head(conn: Connection) -> bool:
    """True when the database's schema is already at Dagster's newest revision: nothing to create or migrate, and
    Dagster's own checks (the slow path, kept for every other case) would do nothing."""
    head = head_revision()
    return head is not None and MigrationContext.configure(conn).get_current_revision() == head


def _ready_database(base_dir: str, name: str, table: str | None = None) -> str | None:
    """The connection string of `base_dir/name.db` when it exists at head (with `table`), else None: Dagster's own
    opening (which creates, stamps or migrates) is then the way."""
    if not os.path.exists(os.path.join(base_dir, f"{name}.db")):
        return None
    conn_string = create_db_conn_string(base_dir, name)
    try:
        engine = create_engine(conn_string, poolclass=NullPool)
        try:
            with engine.connect() as conn:
                ready = at_head(conn) and (table is None or db.inspect(conn).has_table(table))
        finally:
            engine.dispose()
    except db.exc.DBAPIError:
        return None
    return conn_string if ready else None


def _created_new_shard(conn: Connection) -> bool:
    """Dagster's event tables, WAL and the head revision in an empty database; False when it holds tables."""
    if db.inspect(conn).get_table_names():
        return False
    SqlEventLogStorageMetadata.create_all(conn)
    conn.execute(db.text("PRAGMA journal_mode=WAL;"))
    MigrationContext.configure(conn).stamp(_scripts(), "head")
    safe_commit(conn)
    return True


class KaviEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage (a shard per run, an index shard) with kept engines and known tables."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        # Set before the parent's constructor, which may already connect (a new index shard).
        self._engines = Engines(connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS})
        self._tables: set[str] = set()
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> "KaviEventLogStorage":
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:
            engine = self._engines.get(self.conn_string_for_shard(shard))
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn
            self._engines.hold(engine)

    def _initdb(self, engine: Engine, for_index_shard: bool = False) -> None:
        # A shard already at head: nothing to do. A brand-new run shard (no tables: the run was just created):
        # Dagster's tables, WAL, and the head revision stamped with the scripts read once. Anything else (an index
        # shard, an older schema, a shard another process is creating): Dagster's own code, with its retries.
        try:
            with engine.connect() as conn:
                if at_head(conn) or (not for_index_shard and _created_new_shard(conn)):
                    return
        except db.exc.DBAPIError:
            pass
        super()._initdb(engine, for_index_shard)

    def has_table(self, table_name: str) -> bool:
        # Asked before many reads and writes (is this migration applied?); a table, once there, stays.
        if table_name in self._tables:
            return True
        found = super().has_table(table_name)
        if found:
            self._tables.add(table_name)
        return found


class KaviRunStorage(SqliteRunStorage):
    """SqliteRunStorage (runs.db) with a kept engine."""

    def __init__(self, conn_string: str, inst_data: ConfigurableClassData | None = None) -> None:
        self._engines = Engines()
        super().__init__(conn_string, inst_data)

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> "KaviRunStorage":
        return cls.from_local(inst_data=inst_data, **config_value)

    @classmethod
    def from_local(cls, base_dir: str, inst_data: ConfigurableClassData | None = None) -> "KaviRunStorage":
        # runs.db at head with its instance table: what Dagster's from_local would return without changing a thing.
        conn_string = _ready_database(base_dir, "runs", "instance_info")
        if conn_string is not None:
            return cls(conn_string, inst_data)
        return super().from_local(base_dir, inst_data)

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        engine = self._engines.get(self._conn_string)
        with engine.connect() as conn, conn.begin():
            yield conn
        self._engines.hold(engine)


class KaviScheduleStorage(SqliteScheduleStorage):
    """SqliteScheduleStorage (schedules.db), opened without re-reading the migration scripts when at head."""

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> "KaviScheduleStorage":
        return cls.from_local(inst_data=inst_data, **config_value)

    @classmethod
    def from_local(cls, base_dir: str, inst_data: ConfigurableClassData | None = None) -> "KaviScheduleStorage":
        conn_string = _ready_database(base_dir, "schedules")
        if conn_string is not None:
            return cls(conn_string, inst_data)
        made = super().from_local(base_dir, inst_data)
        assert isinstance(made, KaviScheduleStorage)
        return made


def _runs_dir(base: str) -> str:
    return os.path.join(base, "history", "")


def _event_logs_dir(base: str) -> str:
    return os.path.join(base, "history", "runs", "")


def _schedules_dir(base: str) -> str:
    return os.path.join(base, "schedules")


class KaviSqliteStorage(DagsterSqliteStorage):
    """DagsterSqliteStorage's folders and files under `base_dir`, through KaviRunStorage and KaviEventLogStorage
    (schedules: Dagster's own SqliteScheduleStorage)."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        # Not the parent's constructor: it would open every database a first time through Dagster's own classes.
        self.base_dir = base_dir
        self._run_storage = KaviRunStorage.from_local(_runs_dir(base_dir))
        self._event_log_storage = KaviEventLogStorage(_event_logs_dir(base_dir))
        self._schedule_storage = KaviScheduleStorage.from_local(_schedules_dir(base_dir))
        self._inst_data = inst_data
        super(DagsterSqliteStorage, self).__init__()  # type: ignore[no-untyped-call]

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> "KaviSqliteStorage":
        return cls.from_local(inst_data=inst_data, **config_value)

    @property
    def event_storage_data(self) -> ConfigurableClassData | None:
        return ConfigurableClassData(MODULE, "KaviEventLogStorage",
                                     yaml.dump({"base_dir": _event_logs_dir(self.base_dir)}, default_flow_style=False))

    @property
    def run_storage_data(self) -> ConfigurableClassData | None:
        return ConfigurableClassData(MODULE, "KaviRunStorage",
                                     yaml.dump({"base_dir": _runs_dir(self.base_dir)}, default_flow_style=False))

    @property
    def schedule_storage_data(self) -> ConfigurableClassData | None:
        return ConfigurableClassData(MODULE, "KaviScheduleStorage",
                                     yaml.dump({"base_dir": _schedules_dir(self.base_dir)}, default_flow_style=False))
