"""A ledger session answers a repeated read from the rows it gave before, and forgets them at its first write; batched
artifact and lineage inserts keep INSERT OR IGNORE's meaning in one statement."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import duckdb

from kavi.ledger.artifacts import ArtifactStore
from kavi.ledger.record_base import _ARTIFACT_COLS, _insert_new
from kavi.ledger.records import ForgeRecords
from kavi.ledger.session_reads import SessionConnection
from kavi.ledger.store import Ledger
from kavi.lifecycle import ProposalStatus
from kavi.proposals.model import parse_proposal


class Counting:
    """A DuckDB connection that counts the statements it ran."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.statements: list[str] = []

    def execute(self, sql: str, params: Any = None) -> "Counting":
        self.statements.append(sql)
        self.con.execute(sql, params)
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.con.fetchall()

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.con.fetchone()

    @property
    def description(self) -> Any:
        return self.con.description


def _wrapped() -> tuple[SessionConnection, Counting]:
    raw = duckdb.connect()
    raw.execute("CREATE TABLE t (k INTEGER, v VARCHAR)")
    raw.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    inner = Counting(raw)
    return SessionConnection(inner), inner


def test_a_repeated_read_is_answered_from_the_session_until_it_writes() -> None:
    con, inner = _wrapped()
    assert con.execute("SELECT v FROM t WHERE k = ?", [1]).fetchone() == ("a",)
    assert con.execute("SELECT v FROM t WHERE k = ?", [1]).fetchone() == ("a",)
    assert con.execute("SELECT v FROM t WHERE k = ?", [1]).fetchall() == [("a",)]
    assert len(inner.statements) == 1 and con.remembered == 2
    # Other parameters, or the same value as another type, are another read.
    assert con.execute("SELECT v FROM t WHERE k = ?", [2]).fetchall() == [("b",)]
    assert con.execute("SELECT v FROM t WHERE k = ?", [True]).fetchall() == [("a",)]
    assert len(inner.statements) == 3
    # A write forgets every remembered read: the next one sees it.
    con.execute("UPDATE t SET v = 'z' WHERE k = ?", [1])
    assert con.execute("SELECT v FROM t WHERE k = ?", [1]).fetchone() == ("z",)
    assert len(inner.statements) == 5
    # fetchone walks the rows as a cursor does, then gives None.
    rows = con.execute("SELECT k FROM t ORDER BY k")
    assert [rows.fetchone(), rows.fetchone(), rows.fetchone()] == [(1,), (2,), None]
    again = con.execute("SELECT k FROM t ORDER BY k")
    assert again.fetchone() == (1,) and again.fetchall() == [(2,)]


def test_reads_that_can_change_or_rows_that_can_be_changed_always_run() -> None:
    con, inner = _wrapped()
    for _ in range(2):
        con.execute("SELECT random() < 2")
        con.execute("SELECT [k, k] FROM t").fetchall()  # a list a caller could change in place
        con.execute("select nextval IS NULL FROM (SELECT 1 AS nextval)")
    assert len(inner.statements) == 6 and con.remembered == 0
    rows = con.execute("SELECT [k] FROM t ORDER BY k").fetchall()
    rows[0][0].append(99)
    assert con.execute("SELECT [k] FROM t ORDER BY k").fetchall()[0] == ([1],)


def test_whatever_else_of_the_cursor_is_wanted_describes_the_last_read() -> None:
    con, inner = _wrapped()
    con.execute("SELECT k, v FROM t WHERE k = ?", [2]).fetchall()
    con.execute("SELECT k, v FROM t WHERE k = ?", [2])
    assert [d[0] for d in con.description] == ["k", "v"]  # the read ran again, so the cursor is its own
    assert inner.statements.count("SELECT k, v FROM t WHERE k = ?") == 2
    # and nothing remembered outlives a call the wrapper cannot see
    con.execute("SELECT k, v FROM t WHERE k = ?", [2]).fetchall()
    assert inner.statements.count("SELECT k, v FROM t WHERE k = ?") == 3


def test_a_forge_session_reads_a_proposal_once_and_sees_its_own_writes(tmp_path: Path,
                                                                        proposal_data: dict[str, Any]) -> None:
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    records.register_proposal(parse_proposal(proposal_data), source_path=None, complexity=0.2)
    with records.session():
        first = records.require_proposal("word_count")
        second = records.require_proposal("word_count")
        assert first == second and first is not second  # each caller gets its own objects
        session = records.ledger._local.con
        assert isinstance(session, SessionConnection) and session.remembered == 1
        records.set_status("word_count", ProposalStatus.BUILT, build_id=None, reason="test")
        assert records.require_proposal("word_count").status is ProposalStatus.BUILT
    assert records.require_proposal("word_count").status is ProposalStatus.BUILT


def test_one_insert_statement_keeps_insert_or_ignore_with_each_rows_bound(tmp_path: Path) -> None:
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    store = ArtifactStore(tmp_path / "artifacts")
    old = store.put(b"old", "note")
    records.record_artifact(old)
    refs = [store.put(b"old", "note"), store.put(b"one", "note"), store.put(b"two", "note"),
            store.put(b"one", "note")]
    assert refs[0].stored_at is None and refs[1].stored_at is not None  # the old file was there already
    records.record_artifacts(refs)
    records.record_artifacts(refs[1:3])
    with records.ledger.connect() as con:
        rows = con.execute("SELECT sha256, count(*) FROM artifacts GROUP BY sha256").fetchall()
    assert sorted(rows) == sorted([(old.sha256, 1), (refs[1].sha256, 1), (refs[2].sha256, 1)])

    raw = duckdb.connect()
    raw.execute("CREATE TABLE artifacts (sha256 VARCHAR, kind VARCHAR, size BIGINT, path VARCHAR, "
                "created_at TIMESTAMPTZ)")
    counted = Counting(raw)
    con = cast(duckdb.DuckDBPyConnection, counted)
    now = datetime.now(UTC)
    bounds = [now - timedelta(seconds=5), now - timedelta(seconds=1), now - timedelta(seconds=3)]
    batch = [[f"h{i}", "note", 1, "p", now] for i in range(3)]
    for _ in range(2):  # the second time every key is there: nothing is inserted
        _insert_new(con, "artifacts", ("sha256",), _ARTIFACT_COLS, batch, newer_than=bounds)
    assert len(counted.statements) == 2 and "created_at >= ?" in counted.statements[0]
    assert raw.execute("SELECT count(*), count(DISTINCT sha256) FROM artifacts").fetchone() == (3, 3)
    _insert_new(con, "artifacts", ("sha256",), _ARTIFACT_COLS, [*batch, ["h9", "note", 1, "p", now]],
                newer_than=[*bounds, None])
    assert "created_at >= ?" not in counted.statements[-1]  # one row without a bound: the lookup is unbounded
    assert raw.execute("SELECT count(*) FROM artifacts").fetchone() == (4,)
