"""The shared ledger: DuckLake with its catalog in PostgreSQL and its data files on a shared path.

Selected by configuration, never by default:

    KAVI_LEDGER_URL=ducklake:postgres:host=db.internal port=5432 user=kavi dbname=kavi
    KAVI_LEDGER_DATA=/shared/kavi/ledger-data      (default: <KAVI_HOME>/ledger-data)

Queries stay DuckDB SQL: every connection is a DuckDB database with the lake attached and selected (`USE`), so the
records' SQL (QUALIFY, information_schema, UPDATE) runs unchanged. The extensions come from the PyPI packages
`duckdb-extension-ducklake` and `duckdb-extension-postgres` (the `scale` extra) and are loaded by absolute path, so
no DuckDB `INSTALL` (a download) ever happens.

Concurrency. DuckLake is optimistic: two transactions that touch the same table in conflicting ways (an UPDATE or
DELETE against anything else the other committed to that table) fail at COMMIT. The ledger's units of work read,
check and then write (an attempt's number is checked free, then recorded; the proposal row mirrors the latest
attempt), which is only correct if they are serialisable. So each unit of work first takes a PostgreSQL advisory
lock on the catalog's database (the "funnel"): units from every worker on every machine commit one at a time, the
check inside a unit sees every earlier commit, and an attempt number can never be recorded twice, with or without
a filesystem that honours flock. The lock is a session lock of its own catalog connection, released at the end of
the unit and by PostgreSQL when the process dies. Writers that bypass the funnel (maintenance, another tool) can
still make a commit conflict: `Ledger.unit_of_work` reruns a whole unit on such a conflict, and a conflict in any
other unit surfaces as one clear LedgerCommitConflict line, never as a half-applied step.
"""

import importlib.util
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from kavi.lake_config import LakeConfig
from kavi.settings import read_setting


class LakeUnavailableError(RuntimeError):
    """The shared ledger's extensions or catalog cannot be reached."""


def extension_file(package: str, name: str) -> Path:
    """The `.duckdb_extension` file shipped inside a `duckdb-extension-<name>` package for this DuckDB."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LakeUnavailableError(f"the shared ledger needs the Python package {package.replace('_', '-')} "
                                   "(pip install -e '.[scale]')")
    root = Path(next(iter(spec.submodule_search_locations))) / "extensions" / f"v{duckdb.__version__}"
    path = root / f"{name}.duckdb_extension"
    if not path.is_file():
        raise LakeUnavailableError(f"{package} has no {name} extension for duckdb {duckdb.__version__} ({root})")
    return path


def _postgres_extension(cache: Path) -> Path:
    """DuckDB loads the postgres extension only under its internal name: a copy named postgres_scanner."""
    src = extension_file("duckdb_extension_postgres", "postgres")
    target = cache / f"v{duckdb.__version__}" / "postgres_scanner.duckdb_extension"
    if not target.is_file() or target.stat().st_size != src.stat().st_size:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        shutil.copyfile(src, tmp)
        os.replace(tmp, target)
    return target


_bases: dict[tuple[int, str, str], duckdb.DuckDBPyConnection] = {}
_bases_lock = threading.Lock()


def _base(cfg: LakeConfig, cache: Path) -> duckdb.DuckDBPyConnection:
    """This process's DuckDB database with the lake attached (slow to build); units of work use cheap cursors of it.
    Keyed by pid: a forked child (a Celery prefork worker) builds its own."""
    key = (os.getpid(), cfg.dsn, str(cfg.data_path))
    with _bases_lock:
        con = _bases.get(key)
        if con is not None:
            return con
        cfg.data_path.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
        try:
            con.execute(f"LOAD '{_postgres_extension(cache)}'")
            con.execute(f"LOAD '{extension_file('duckdb_extension_ducklake', 'ducklake')}'")
            con.execute(f"ATTACH 'ducklake:postgres:{cfg.dsn}' AS kavi_lake (DATA_PATH '{cfg.data_path}/')")
        except duckdb.Error as err:
            con.close()
            raise LakeUnavailableError(f"cannot open the shared ledger {cfg.label}: {str(err).strip()[:300]}") from None
        _bases[key] = con
        return con


def lake_cursor(cfg: LakeConfig, cache: Path) -> duckdb.DuckDBPyConnection:
    """A connection of its own (own transaction) to the process's lake database, with the lake selected."""
    cur = _base(cfg, cache).cursor()
    cur.execute("USE kavi_lake")
    return cur


def is_commit_conflict(err: BaseException) -> bool:
    return isinstance(err, duckdb.TransactionException) and "conflict" in str(err).lower()


_pg_local = threading.local()


def _pg_connection(cfg: LakeConfig) -> Any:
    import psycopg2

    cached = getattr(_pg_local, "con", None)
    if cached is not None and cached[0] == (os.getpid(), cfg.dsn) and not cached[1].closed:
        return cached[1]
    try:
        con = psycopg2.connect(cfg.dsn, connect_timeout=10, application_name="kavi-ledger-funnel")
    except psycopg2.Error as err:
        raise LakeUnavailableError(f"cannot reach the shared ledger's catalog ({cfg.label}): "
                                   f"{str(err).strip()[:200]}") from None
    con.autocommit = True
    _pg_local.con = ((os.getpid(), cfg.dsn), con)
    return con


class FunnelTimeout(RuntimeError):
    """The ledger's advisory lock stayed held by another unit of work for longer than the timeout."""


@contextmanager
def funnel(cfg: LakeConfig, timeout_s: float) -> Iterator[None]:
    """Hold the ledger's advisory lock for one unit of work (see the module's docstring for why)."""
    import psycopg2

    con = _pg_connection(cfg)
    try:
        with con.cursor() as cur:
            cur.execute("SET lock_timeout = %s", [f"{max(1, int(timeout_s * 1000))}ms"])
            cur.execute("SELECT pg_advisory_lock(%s)", [cfg.lock_key])
    except psycopg2.errors.LockNotAvailable:
        raise FunnelTimeout(f"the shared ledger {cfg.label} stayed locked by another unit of work for "
                            f"{timeout_s:.0f}s") from None
    except psycopg2.Error as err:
        _pg_local.con = None
        con.close()
        raise LakeUnavailableError(f"the shared ledger's catalog failed ({cfg.label}): {str(err).strip()[:200]}") \
            from None
    try:
        yield
    finally:
        try:
            with con.cursor() as cur:
                cur.execute("SELECT pg_advisory_unlock(%s)", [cfg.lock_key])
        except psycopg2.Error:
            # The session is gone or broken: dropping it releases the lock on the server.
            _pg_local.con = None
            con.close()


def close_lakes() -> None:
    """Close this process's lake databases and catalog connection (tests that make many lakes; a worker at exit)."""
    with _bases_lock:
        for key in [k for k in _bases if k[0] == os.getpid()]:
            _bases.pop(key).close()
    cached = getattr(_pg_local, "con", None)
    if cached is not None:
        _pg_local.con = None
        cached[1].close()


_tables: list[str] = []


def lake_tables() -> list[str]:
    """CREATE TABLE statements of the ledger's current schema without keys or indexes: the migrations applied to
    an in-memory DuckDB, then each table's columns (type, default, NOT NULL) read back. One source of truth (the
    migrations) for both backends; `schema_version` is the caller's."""
    if _tables:
        return list(_tables)
    from kavi.ledger.schema import MIGRATIONS

    ref = duckdb.connect()
    try:
        ref.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
        for _, statements in MIGRATIONS:
            for stmt in statements:
                ref.execute(stmt)
        names = [r[0] for r in ref.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND table_name <> 'schema_version' "
            "ORDER BY table_name").fetchall()]
        out: list[str] = []
        for name in names:
            cols = ref.execute(
                "SELECT column_name, data_type, column_default, is_nullable FROM duckdb_columns() "
                "WHERE schema_name = 'main' AND table_name = ? ORDER BY column_index", [name]).fetchall()
            defs = [f'"{c}" {t}' + (f" DEFAULT {d}" if d is not None else "") + ("" if nullable else " NOT NULL")
                    for c, t, d, nullable in cols]
            out.append(f'CREATE TABLE IF NOT EXISTS "{name}" ({", ".join(defs)})')
    finally:
        ref.close()
    _tables[:] = out
    return list(out)


def ledger_present(path: Path, ledger_url: str | None = None) -> bool:
    """Whether there is a ledger to read: the shared one when configured (`ledger_url`, KAVI_LEDGER_URL; None: the
    variable alone, read by kavi.settings), else the file at `path`."""
    url: str = read_setting("ledger_url") if ledger_url is None else ledger_url
    return bool(url.strip()) or path.exists()
