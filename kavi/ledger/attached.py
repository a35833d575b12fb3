"""Ledger files attached to one in-memory DuckDB database per process, instead of a new database per connection.

`duckdb.connect(path)` builds a whole DuckDB instance (its catalog of built-in functions, its buffer pool and
threads) and tears it down at `close()`, a cost paid before the file is even read (README, figures behind design
choices), and the ledger opens a connection per unit of work. Here each process keeps one in-memory instance; a
unit of work ATTACHes the file, works in a cursor of its own (its own transaction), and the last unit of work open
on that file DETACHes it. The file is opened and closed, and its lock taken and released, exactly when a connection
of its own would have been, so other processes see the same one-writer lock as before.

Keyed by pid: a forked child builds its own instance (DuckDB's threads do not survive a fork).
"""

import hashlib
import os
import threading
from typing import Any

import duckdb

_lock = threading.Lock()
_bases: dict[int, duckdb.DuckDBPyConnection] = {}
# (pid, alias) -> cursors open on that attachment
_users: dict[tuple[int, str], int] = {}
# attachments whose DETACH failed: detached again before the next ATTACH of their file
_stale: set[tuple[int, str]] = set()


def _base() -> duckdb.DuckDBPyConnection:
    pid = os.getpid()
    con = _bases.get(pid)
    if con is None:
        con = _bases[pid] = duckdb.connect(":memory:")
    return con


def _alias(path: str) -> str:
    return "ledger_" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:16]


def sql_string(text: str) -> str:
    """`text` as an SQL string literal (quotes doubled), for the statements that take no parameters (ATTACH, PRAGMA)."""
    return "'" + text.replace("'", "''") + "'"


class AttachedConnection:
    """A cursor of the process's instance with one ledger file selected; `close()` releases the file (detached once
    no other cursor of this process uses it). Everything else is the cursor's."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, key: tuple[int, str]) -> None:
        self._cursor: duckdb.DuckDBPyConnection | None = cursor
        self._key = key

    def __getattr__(self, name: str) -> Any:
        if self._cursor is None:
            raise duckdb.ConnectionException("Connection already closed!")
        return getattr(self._cursor, name)

    def close(self) -> None:
        cursor, self._cursor = self._cursor, None
        if cursor is None:
            return
        try:
            cursor.close()
        finally:
            _release(self._key)


def attach(path: str) -> AttachedConnection:
    """A connection to the DuckDB file at `path` (read-write), through this process's instance. Raises what
    `duckdb.connect(path)` raises: a lock held by another process, a file that is not a DuckDB database."""
    path = os.path.realpath(path)
    alias = _alias(path)
    key = (os.getpid(), alias)
    with _lock:
        base = _base()
        if _users.get(key, 0) == 0:
            if key in _stale:
                base.execute(f"DETACH DATABASE IF EXISTS {alias}")
                _stale.discard(key)
            base.execute(f"ATTACH {sql_string(path)} AS {alias}")
            _users[key] = 0
        _users[key] += 1
        try:
            cursor = base.cursor()
        except BaseException:
            _users[key] -= 1
            _detach_if_unused(key)
            raise
    try:
        cursor.execute(f"USE {alias}")
    except BaseException:
        cursor.close()
        _release(key)
        raise
    return AttachedConnection(cursor, key)


def _release(key: tuple[int, str]) -> None:
    with _lock:
        _users[key] -= 1
        _detach_if_unused(key)


def _detach_if_unused(key: tuple[int, str]) -> None:
    if _users.get(key, 0) > 0:
        return
    _users.pop(key, None)
    base = _bases.get(key[0])
    if base is not None and key[0] == os.getpid():
        try:
            base.execute(f"DETACH {key[1]}")
        except duckdb.Error:
            _stale.add(key)
            raise
