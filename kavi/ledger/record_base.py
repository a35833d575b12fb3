"""What the forge records' aggregates share: the ledger they read and write, their errors, the reading of
timestamps, and the keyed batch inserts the tables without database keys rely on."""

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb

from kavi.ledger.artifacts import ArtifactRef
from kavi.ledger.store import Ledger


class LedgerRecordError(LookupError):
    """A record the caller relies on is missing."""


class LedgerConflictError(LedgerRecordError):
    """A record that must be unique (a build id, an attempt of a proposal) is already there."""


class RecordsBase:
    """The ledger every aggregate's records work on. Each method is one unit of work: one connection, one
    transaction."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def session(self) -> AbstractContextManager[None]:
        """Batch the calls of one step into one connection and one transaction (see `Ledger.session`)."""
        return self.ledger.session()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ARTIFACT_COLS = ("sha256", "kind", "size", "path", "created_at")
_LINEAGE_COLS = ("parent_sha256", "child_sha256", "relation", "build_id", "proposal_name", "created_at", "child_kind",
                 "child_size")


def _ids_filter(build_ids: Sequence[str]) -> str:
    """`build_id IN (...)`, led by the range the ids span: DuckDB prunes row groups by a range, not by a list, and
    without the range it reads every column of the table for the list."""
    return f"build_id BETWEEN ? AND ? AND build_id IN ({', '.join('?' for _ in build_ids)})"


def _iso_sql(col: str) -> str:
    """SQL giving `col` (TIMESTAMPTZ) as Python's `datetime.isoformat()` of it in UTC: for listings of thousands
    of rows, formatting in the database beats converting each value to a datetime and back."""
    us = f"epoch_us({col})"
    return (f"(strftime(make_timestamp({us}), '%Y-%m-%dT%H:%M:%S') || CASE WHEN {us} % 1000000 = 0 THEN '' "
            f"ELSE '.' || lpad(CAST({us} % 1000000 AS VARCHAR), 6, '0') END || '+00:00')")


def _utc(epoch_us: int | None) -> datetime | None:
    """A timestamp read as `epoch_us(col)`: DuckDB's own TIMESTAMPTZ conversion costs microseconds per value
    (a time zone lookup each), which dominates queries that return thousands of rows."""
    return None if epoch_us is None else _EPOCH + timedelta(microseconds=epoch_us)


# The tables that grow with every attempt have no key in the database (see schema migration 3): these keep
# their keys unique. The ledger has one writing process at a time, and each step writes in one transaction.

def _insert_new(con: duckdb.DuckDBPyConnection, table: str, key: Sequence[str], cols: Sequence[str],
                rows: Sequence[Sequence[Any]], newer_than: Sequence[datetime | None] | None = None,
                absent: bool = False) -> None:
    """INSERT OR IGNORE, in one statement: the rows whose key is neither in the table nor earlier in `rows`.

    `newer_than[i]`, when set, says any row with row i's key was created after that time (its artifact was
    stored then): the lookup reads only the rows created since the earliest of them, which DuckDB finds by the row
    groups' time ranges instead of scanning the table (a bound earlier than a row's own is still a bound for it;
    one row without a bound leaves the lookup unbounded). With `absent` the caller knows no key can be there yet.
    """
    at = [cols.index(k) for k in key]
    seen: set[tuple[Any, ...]] = set()
    new: list[Sequence[Any]] = []
    bounds: list[datetime | None] = []
    for i, r in enumerate(rows):
        k = tuple(r[j] for j in at)
        if k not in seen:
            seen.add(k)
            new.append(r)
            bounds.append(newer_than[i] if newer_than is not None else None)
    if not new:
        return
    values = ", ".join("(" + ", ".join("?" for _ in cols) + ")" for _ in new)
    params = [x for r in new for x in r]
    if absent:
        con.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES {values}", params)
        return
    since = None if any(b is None for b in bounds) else min(b for b in bounds if b is not None)
    same = " AND ".join(f"t.{k} = v.{k}" for k in key)
    recent = " AND t.created_at >= ?" if since is not None else ""
    con.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT * FROM (VALUES {values}) "
                f"v({', '.join(cols)}) WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE {same}{recent})",
                params + ([since] if since is not None else []))


def _replace(con: duckdb.DuckDBPyConnection, table: str, key: Sequence[str], cols: Sequence[str],
             rows: Sequence[Sequence[Any]]) -> None:
    """INSERT OR REPLACE: the rows' keys are deleted, then the rows inserted (the last row of a key wins)."""
    at = [cols.index(k) for k in key]
    last = {tuple(r[i] for i in at): r for r in rows}
    if not last:
        return
    match = " OR ".join("(" + " AND ".join(f"{k} = ?" for k in key) + ")" for _ in last)
    con.execute(f"DELETE FROM {table} WHERE {match}", [x for k in last for x in k])
    values = ", ".join("(" + ", ".join("?" for _ in cols) + ")" for _ in last)
    con.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES {values}", [x for r in last.values() for x in r])


def _artifacts_with_lineage(
    con: duckdb.DuckDBPyConnection, items: Sequence[tuple[ArtifactRef, str, str]], build_id: str | None,
    name: str | None, now: datetime,
) -> None:
    """Artifacts (ref, lineage parent, relation) and the edge to each: one statement per table, however many."""
    if not items:
        return
    bounds = [ref.stored_at for ref, _, _ in items]
    _insert_new(con, "artifacts", ("sha256",), _ARTIFACT_COLS,
                [[ref.sha256, ref.kind, ref.size, str(ref.path), now] for ref, _, _ in items], newer_than=bounds)
    _insert_new(con, "lineage", ("parent_sha256", "child_sha256", "relation"), _LINEAGE_COLS,
                [[parent, ref.sha256, relation, build_id, name, now, ref.kind, ref.size]
                 for ref, parent, relation in items], newer_than=bounds)


def _artifact(con: duckdb.DuckDBPyConnection, ref: ArtifactRef, now: datetime) -> None:
    _insert_new(con, "artifacts", ("sha256",), _ARTIFACT_COLS,
                [[ref.sha256, ref.kind, ref.size, str(ref.path), now]], newer_than=[ref.stored_at])


def _lineage(
    con: duckdb.DuckDBPyConnection, parent: str, child: ArtifactRef, relation: str, build_id: str | None,
    name: str | None, now: datetime,
) -> None:
    """An edge parent → child, with the child's kind and size; an edge already recorded is kept as it was."""
    _insert_new(con, "lineage", ("parent_sha256", "child_sha256", "relation"), _LINEAGE_COLS,
                [[parent, child.sha256, relation, build_id, name, now, child.kind, child.size]],
                newer_than=[child.stored_at])
