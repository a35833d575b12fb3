"""The connection a ledger session hands to every call inside it: a read the session already made is answered from
the rows it returned, until the session writes.

A session is one transaction, so the same SELECT with the same parameters reads the same rows until that transaction
itself changes something; the forge's steps ask for the same proposal, build and gate results several times in one
session (each helper reads what it needs), and every repeat was a round trip to the ledger host or a statement
planned again. Any statement that is not a plain SELECT runs as always and forgets every remembered read.
"""

from collections.abc import Mapping, Sequence
from typing import Any

# Reads whose answer can change within a transaction without a write of its own.
_UNSTABLE = ("NEXTVAL", "CURRVAL", "RANDOM", "UUID", "SETSEED")


def _key(sql: str, params: Any) -> tuple[Any, ...] | None:
    """What identifies a remembered read, or None when the statement must run (a write, or a read that could differ)."""
    head = sql.lstrip()[:6].upper()
    if head != "SELECT" or any(word in sql.upper() for word in _UNSTABLE):
        return None
    if params is None:
        bound: tuple[Any, ...] = ()
    elif isinstance(params, Mapping):
        bound = tuple(sorted((str(k), type(v).__name__, v) for k, v in params.items()))
    elif isinstance(params, Sequence) and not isinstance(params, str | bytes):
        bound = tuple((type(v).__name__, v) for v in params)
    else:
        return None
    try:
        hash(bound)
    except TypeError:
        return None
    return (sql, bound)


def _immutable(rows: list[tuple[Any, ...]]) -> bool:
    """Rows a caller cannot change in place (no lists or dicts from list or struct columns)."""
    return not any(isinstance(v, list | dict | set | bytearray) for r in rows for v in r)


class SessionConnection:
    """Wraps a session's connection (a DuckDB connection or the ledger host's); offers what the ledger code uses of
    one (execute, executemany, fetchone, fetchall, close) and passes anything else through."""

    def __init__(self, con: Any) -> None:
        self._con = con
        self._reads: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
        self._served: list[tuple[Any, ...]] | None = None  # the rows of the last statement, when answered here
        self._last: tuple[str, Any] | None = None  # that statement, run again if its cursor itself is wanted
        self.remembered = 0  # reads answered without a statement (for tests and benchmarks)

    def _run(self, sql: str, params: Any) -> None:
        if params is None:
            self._con.execute(sql)
        else:
            self._con.execute(sql, params)

    def execute(self, sql: str, params: Any = None) -> "SessionConnection":
        key = _key(sql, params)
        if key is None:
            self._reads.clear()
            self._served = self._last = None
            self._run(sql, params)
            return self
        rows = self._reads.get(key)
        if rows is None:
            self._run(sql, params)
            rows = list(self._con.fetchall())
            if _immutable(rows):
                self._reads[key] = rows
        else:
            self.remembered += 1
        self._served = list(rows)
        self._last = (sql, params)
        return self

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> "SessionConnection":
        self._reads.clear()
        self._served = self._last = None
        self._con.executemany(sql, params)
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        if self._served is None:
            return list(self._con.fetchall())
        rows, self._served = self._served, []
        return rows

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._served is None:
            row: tuple[Any, ...] | None = self._con.fetchone()
            return row
        return self._served.pop(0) if self._served else None

    def close(self) -> None:
        self._con.close()

    def __getattr__(self, name: str) -> Any:
        # Anything else (a cursor, another kind of fetch): a read answered here runs on the connection after all, so
        # what is passed through has its result; and nothing remembered outlives a call this wrapper cannot see.
        if self._last is not None and self._served is not None:
            sql, params = self._last
            self._served = self._last = None
            self._run(sql, params)
        self._reads.clear()
        return getattr(self._con, name)
