"""The ledger: migrations, write-once artifacts, concurrent writers, the promotion hash chain."""

import contextlib
import multiprocessing
import os
from pathlib import Path
from typing import Any

import duckdb
import pytest

from kavi.ledger.artifacts import ArtifactStore
from kavi.ledger.records import ForgeRecords
from kavi.ledger.schema import SCHEMA_VERSION
from kavi.ledger.store import Ledger, LedgerLockedError
from kavi.lifecycle import ProposalStatus
from kavi.proposals.model import parse_proposal


@pytest.mark.ledger_file
def test_migrations_recorded_and_idempotent(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.duckdb")
    assert led.schema_version() == SCHEMA_VERSION
    again = Ledger(tmp_path / "l.duckdb")
    assert again.schema_version() == SCHEMA_VERSION
    con = duckdb.connect(str(tmp_path / "l.duckdb"))
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        con.close()
    assert {"proposals", "builds", "gate_results", "research_notes", "promotions", "artifacts", "lineage",
            "model_outcomes", "executions", "schema_version"} <= tables


def test_artifact_written_once_never_overwritten(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    a = store.put(b"hello", "note")
    b = store.put(b"hello", "note")
    assert a.path == b.path and a.sha256 == b.sha256
    assert a.path.parent.name == a.sha256[:2]
    mtime = a.path.stat().st_mtime_ns
    store.put(b"hello", "note")
    assert a.path.stat().st_mtime_ns == mtime
    assert not os.access(a.path, os.W_OK) or os.geteuid() == 0  # read-only file (root ignores modes)
    assert len(list((tmp_path / "artifacts").rglob("*"))) == 3  # sha256/, ab/, file
    assert store.get(a.sha256) == b"hello"


def _writer(path: str, tag: str, n: int) -> None:
    led = Ledger(Path(path), lock_timeout_s=60)
    for i in range(n):
        with led.connect() as con:
            con.execute(
                "INSERT INTO model_outcomes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, now())",
                [f"{tag}-{i}", "p", "m", "t", True, None, 1.0, 1, None],
            )


def test_two_processes_write_at_once_nothing_lost(tmp_path: Path) -> None:
    path = tmp_path / "l.duckdb"
    Ledger(path)
    ctx = multiprocessing.get_context("spawn")
    n = 60
    procs = [ctx.Process(target=_writer, args=(str(path), tag, n)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with Ledger(path).connect() as con:
        row = con.execute("SELECT count(*) FROM model_outcomes").fetchone()
    assert row is not None and row[0] == 2 * n


def _hold_lock(path: str, ready: Any, release: Any) -> None:
    con = duckdb.connect(path)
    ready.set()
    release.wait(30)
    con.close()


@pytest.mark.ledger_file
def test_lock_held_too_long_gives_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "l.duckdb"
    Ledger(path)
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    p = ctx.Process(target=_hold_lock, args=(str(path), ready, release))
    p.start()
    try:
        assert ready.wait(30)
        with pytest.raises(LedgerLockedError, match="locked by another process"):
            Ledger(path, lock_timeout_s=0.5, migrate=False).schema_version()
    finally:
        release.set()
        p.join(30)


def _promote(records: ForgeRecords, name: str, proposal_data: dict[str, Any]) -> None:
    data = dict(proposal_data, name=name)
    records.register_proposal(parse_proposal(data), source_path=None, complexity=0.1)
    records.record_promotion(name=name, build_id=f"{name}-a1-x", from_status=ProposalStatus.VERIFIED,
                             approved_by="ana", source_sha256="ab" * 32, test_sha256=None,
                             skill_path=f"skills/{name}.py")


def test_promotion_chain_detects_edit_and_delete(tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    for name in ("one_skill", "two_skill", "three_skill"):
        _promote(records, name, proposal_data)
    assert records.verify_promotion_chain() == []
    assert [t.name for t in records.trusted()] == ["one_skill", "three_skill", "two_skill"]
    with records.ledger.connect() as con:
        con.execute("UPDATE promotions SET approved_by = 'mallory' WHERE seq = 2")
    problems = records.verify_promotion_chain()
    assert any("#2" in p and "edited" in p for p in problems)
    with records.ledger.connect() as con:
        con.execute("UPDATE promotions SET approved_by = 'ana' WHERE seq = 2")
        con.execute("DELETE FROM promotions WHERE seq = 2")
    problems = records.verify_promotion_chain()
    assert any("missing" in p for p in problems)
    assert any("does not link" in p for p in problems)


def test_register_proposal_is_idempotent(tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    p = parse_proposal(proposal_data)
    assert records.register_proposal(p, source_path=None, complexity=0.2)
    assert not records.register_proposal(p, source_path=None, complexity=0.2)
    row = records.require_proposal("word_count")
    assert row.status is ProposalStatus.PROPOSED
    assert [e["to"] for e in records.status_events("word_count")] == ["PROPOSED"]


@pytest.mark.ledger_file
def test_a_ledger_migrated_past_versions_it_lacks_gets_them_applied(tmp_path: Path) -> None:
    """A file some diverging build migrated to the latest version without the ones between (seen on a machine
    shared by several builds): the recorded maximum is current, but tables are missing. The missing migrations are
    applied in order; a healthy ledger is left as it is."""
    from kavi.ledger.schema import MIGRATIONS

    path = tmp_path / "ledger.duckdb"
    versions = [v for v, _ in MIGRATIONS]
    skipped = versions[-5:-2]
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
    for version, statements in MIGRATIONS:
        if version in skipped:
            continue
        for stmt in statements:
            # A later migration that needs a skipped one fails, as it did for the diverging build.
            with contextlib.suppress(duckdb.Error):
                con.execute(stmt)
        con.execute("INSERT INTO schema_version VALUES (?, now())", [version])
    tables_before = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
    con.close()
    Ledger(path).migrate()
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert sorted(r[0] for r in con.execute("SELECT version FROM schema_version").fetchall()) == versions
        healthy = tmp_path / "healthy.duckdb"
        Ledger(healthy).migrate()
        with duckdb.connect(str(healthy), read_only=True) as ref:
            want = {r[0] for r in ref.execute("SHOW TABLES").fetchall()}
        assert {r[0] for r in con.execute("SHOW TABLES").fetchall()} == want and want > tables_before
    finally:
        con.close()
    Ledger(path).migrate()  # nothing left to do: the same rows
    with duckdb.connect(str(path), read_only=True) as again:
        assert again.execute("SELECT count(*) FROM schema_version").fetchone() == (len(versions),)
