"""The shared ledger (DuckLake, catalog in PostgreSQL): optimistic commits retried as whole units of work, the funnel
that keeps read-check-write units serialisable across processes, attempt numbers that never repeat without flock,
and content-addressed artifacts that two writers agree on."""

import multiprocessing
import os
from pathlib import Path
from typing import Any

import duckdb
import pytest

from kavi.home import KaviHome
from kavi.ledger.artifacts import ArtifactStore
from kavi.ledger.records import ForgeRecords, LedgerConflictError
from kavi.ledger.store import Ledger, LedgerCommitConflict
from kavi.proposals.model import parse_proposal

pytestmark = pytest.mark.scale


def _counter(led: Ledger) -> None:
    with led.connect() as con:
        con.execute("CREATE TABLE IF NOT EXISTS counter (n INTEGER NOT NULL)")
        con.execute("CREATE TABLE IF NOT EXISTS bumps (who VARCHAR NOT NULL, n INTEGER NOT NULL)")
    with led.connect() as con:
        con.execute("INSERT INTO counter VALUES (0)")


def _value(led: Ledger) -> int:
    with led.connect() as con:
        row = con.execute("SELECT n FROM counter").fetchone()
    assert row is not None
    return int(row[0])


def test_the_backend_is_ducklake(lake_home: KaviHome) -> None:
    led = Ledger(lake_home.ledger_path)
    assert led.lake is not None and "ducklake:postgres:" in led.label
    led.migrate()
    assert not lake_home.ledger_path.exists()  # no local file: the ledger is the lake
    with led.connect() as con:
        db = con.execute("SELECT current_database()").fetchone()
    assert db == ("kavi_lake",)


def test_a_conflicting_commit_is_refused_whole(lake_home: KaviHome) -> None:
    led, other = Ledger(lake_home.ledger_path, funnel=False), Ledger(lake_home.ledger_path, funnel=False)
    _counter(led)
    with pytest.raises(LedgerCommitConflict, match="conflicts with a concurrent"), led.connect() as con:
        con.execute("INSERT INTO bumps VALUES ('mine', 1)")
        with other.connect() as c2:  # another writer commits to the same table first
            c2.execute("UPDATE counter SET n = n + 100")
        con.execute("UPDATE counter SET n = n + 1")
    assert _value(led) == 100
    with led.connect() as con:
        assert con.execute("SELECT count(*) FROM bumps").fetchone() == (0,)  # nothing of the refused unit


def test_unit_of_work_reruns_the_whole_unit_on_a_conflict(lake_home: KaviHome) -> None:
    led, other = Ledger(lake_home.ledger_path, funnel=False), Ledger(lake_home.ledger_path, funnel=False)
    _counter(led)
    calls: list[int] = []

    def bump(con: duckdb.DuckDBPyConnection) -> int:
        row = con.execute("SELECT n FROM counter").fetchone()
        assert row is not None
        calls.append(int(row[0]))
        if len(calls) == 1:
            with other.connect() as c2:  # commits between this unit's read and its commit
                c2.execute("UPDATE counter SET n = n + 100")
        con.execute("UPDATE counter SET n = ?", [int(row[0]) + 1])
        return int(row[0]) + 1

    assert led.unit_of_work(bump) == 101
    assert calls == [0, 100]  # the rerun read again: the concurrent write is not lost
    assert _value(led) == 101


def _bumper(env: dict[str, str], home: str, who: str, n: int, funnel: bool) -> None:
    os.environ.update(env)
    led = Ledger(Path(home) / "ledger.duckdb", funnel=funnel, lock_timeout_s=120)

    def bump(con: duckdb.DuckDBPyConnection) -> None:
        row = con.execute("SELECT n FROM counter").fetchone()
        assert row is not None
        con.execute("UPDATE counter SET n = ?", [int(row[0]) + 1])
        con.execute("INSERT INTO bumps VALUES (?, ?)", [who, int(row[0]) + 1])

    for _ in range(n):
        if funnel:
            with led.connect() as con:  # no retry: the funnel alone must keep read-then-write correct
                bump(con)
        else:
            led.unit_of_work(bump, attempts=200)


def _lake_env() -> dict[str, str]:
    return {k: os.environ[k] for k in ("KAVI_LEDGER_URL", "KAVI_LEDGER_DATA")}


@pytest.mark.parametrize("funnel", [False, True], ids=["optimistic-retry", "funnel"])
def test_two_writer_processes_lose_no_increment(lake_home: KaviHome, funnel: bool) -> None:
    led = Ledger(lake_home.ledger_path)
    _counter(led)
    ctx = multiprocessing.get_context("spawn")
    n = 12
    procs = [ctx.Process(target=_bumper, args=(_lake_env(), str(lake_home.root), who, n, funnel))
             for who in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(240)
        assert p.exitcode == 0
    assert _value(led) == 2 * n
    with led.connect() as con:
        values = [r[0] for r in con.execute("SELECT n FROM bumps ORDER BY n").fetchall()]
        by_who = dict(con.execute("SELECT who, count(*) FROM bumps GROUP BY who").fetchall())
    assert values == list(range(1, 2 * n + 1))  # every read saw every earlier commit: no value twice
    assert by_who == {"a": n, "b": n}


def _start_attempt(env: dict[str, str], home: str, build_id: str, barrier: Any, out: Any) -> None:
    os.environ.update(env)
    h = KaviHome(Path(home))
    records = ForgeRecords(Ledger(h.ledger_path, lock_timeout_s=120))
    packet = ArtifactStore(h.artifacts_dir).put(f"packet of {build_id}".encode(), "build_packet")
    spec = records.require_proposal("word_count").spec_sha256
    barrier.wait(60)
    try:
        records.start_build("word_count", run_id=build_id, model="m", endpoint=None, packet=packet,
                            build_id=build_id, attempt=1, parent_build_id=None, lineage_parent=spec)
        out.put((build_id, "recorded"))
    except LedgerConflictError as err:
        out.put((build_id, f"refused: {err}"))


def test_an_attempt_number_is_recorded_once_without_any_file_lock(lake_home: KaviHome,
                                                                  proposal_data: dict[str, Any]) -> None:
    """Two processes start attempt 1 of one proposal at the same instant, without the flock attempt lock (as
    workers on a filesystem that does not honour flock would): exactly one is recorded."""
    records = ForgeRecords(Ledger(lake_home.ledger_path))
    records.register_proposal(parse_proposal(proposal_data), source_path=None, complexity=0.2)
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_start_attempt, args=(_lake_env(), str(lake_home.root), b, barrier, out))
             for b in ("word_count-a1-one", "word_count-a1-two")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    results = dict(out.get(timeout=5) for _ in procs)
    assert sorted(v.split(":")[0] for v in results.values()) == ["recorded", "refused"], results
    builds = records.builds("word_count")
    assert [(b.attempt_number, results[b.build_id]) for b in builds] == [(1, "recorded")]
    assert records.list_status("word_count")[0]["attempts"] == 1


def _put_many(root: str, n: int, out: Any) -> None:
    store = ArtifactStore(Path(root))
    out.put([(r.sha256, str(r.path)) for r in (store.put(f"shared bytes {i}".encode() * 500, "note")
                                                for i in range(n))])


def test_two_workers_storing_the_same_bytes_agree(lake_home: KaviHome) -> None:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    n = 40
    procs = [ctx.Process(target=_put_many, args=(str(lake_home.artifacts_dir), n, out)) for _ in range(2)]
    for p in procs:
        p.start()
    first, second = out.get(timeout=120), out.get(timeout=120)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert first == second  # same names for the same bytes
    store = ArtifactStore(lake_home.artifacts_dir)
    assert len([p for p in lake_home.artifacts_dir.rglob("*") if p.is_file()]) == n  # one file each, no temp left
    for digest, _ in first:
        store.get(digest)  # every file hashes to its name (raises otherwise)


def test_flushed_rows_live_on_the_shared_path_and_read_the_same(lake_home: KaviHome,
                                                                 proposal_data: dict[str, Any]) -> None:
    records = ForgeRecords(Ledger(lake_home.ledger_path))
    records.register_proposal(parse_proposal(proposal_data), source_path=None, complexity=0.2)
    before = records.list_status()
    with records.ledger.connect() as con:  # small writes sit inline in the catalog until flushed to Parquet
        con.execute("CALL ducklake_flush_inlined_data('kavi_lake')")
    data = Path(os.environ["KAVI_LEDGER_DATA"])
    assert any(p.parent.name == "proposals" for p in data.rglob("*.parquet"))
    assert records.list_status() == before


def test_a_unit_waiting_too_long_for_the_funnel_is_the_usual_locked_error(lake_home: KaviHome) -> None:
    import psycopg2

    from kavi.ledger.store import LedgerLockedError

    led = Ledger(lake_home.ledger_path, lock_timeout_s=0.5)
    led.migrate()
    assert led.lake is not None
    holder = psycopg2.connect(led.lake.dsn)  # another worker in the middle of a unit of work
    try:
        with holder.cursor() as cur:
            cur.execute("SELECT pg_advisory_lock(%s)", [led.lake.lock_key])
        with pytest.raises(LedgerLockedError, match="stayed locked by another unit of work"):
            led.schema_version()
    finally:
        holder.close()
    assert led.schema_version() > 0  # released with the holder's session
