"""The ledger's writes funnelled through one writer (kavi/ledger/host.py). While a host
serves the file, every process's unit of work goes through it — one transaction at a time, rolled back whole when it
fails or its process dies — and no process meets DuckDB's file lock."""

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from kavi.ledger import wire as ledger_host_module
from kavi.ledger.host import ledger_host
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import SCHEMA_VERSION, Ledger, LedgerLockedError
from kavi.ledger.wire import decode, encode, find_host, host_file
from tests.factories import run_writers


def test_values_cross_the_socket_with_their_types() -> None:
    values = [None, True, 3, 2.5, "text", dt.datetime(2026, 11, 25, 3, 4, 5, 6, tzinfo=dt.UTC),
              dt.datetime(2026, 1, 2), dt.date(2026, 1, 2), dt.time(1, 2, 3), dt.timedelta(days=2, seconds=5),
              Decimal("1.50"), b"\x00bytes", uuid.UUID(int=7), [1, [2, "x"]], {"a": 1, 2: [None]}, (1, "t")]
    assert decode(json.loads(json.dumps(encode(values)))) == values
    with pytest.raises(TypeError, match="cannot carry a object"):
        encode(object())
    with pytest.raises(ValueError, match="unknown value tag"):
        decode({"$": "pickle", "v": "..."})


def test_a_host_serves_every_unit_of_work_and_leaves_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "ledger.duckdb"
    with ledger_host(path) as pid:
        assert pid is not None and find_host(path) is not None
        doc = json.loads(host_file(path).read_text())
        assert doc["pid"] == pid and os.stat(Path(doc["socket"]).parent).st_mode & 0o077 == 0  # a private folder
        led = Ledger(path)
        with led.connect() as con:
            con.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, ts TIMESTAMPTZ, note VARCHAR)")
            con.execute("INSERT INTO t VALUES (?, ?, ?)", [1, dt.datetime(2026, 1, 1, tzinfo=dt.UTC), "one"])
            con.executemany("INSERT INTO t VALUES ($k, now(), $n)", [{"k": 2, "n": "two"}, {"k": 3, "n": "three"}])
            assert con.execute("SELECT count(*) FROM t").fetchone() == (3,)
        # DuckDB's own errors come back as DuckDB's exception classes, and the unit is rolled back whole.
        with pytest.raises(duckdb.ConstraintException), led.connect() as con:
            con.execute("INSERT INTO t VALUES (4, now(), 'four')")
            con.execute("INSERT INTO t VALUES (1, now(), 'again')")
        with led.connect() as con:
            rows = con.execute("SELECT k, ts, note FROM t ORDER BY k").fetchall()
            assert [r[0] for r in rows] == [1, 2, 3]
            assert rows[0][1] == dt.datetime(2026, 1, 1, tzinfo=dt.UTC) and rows[0][2] == "one"
            assert con.execute("SELECT k FROM t WHERE k > 5").fetchone() is None
        # Another process reads through the host instead of meeting the lock.
        out = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                              "from kavi.ledger.store import Ledger\n"
                              "with Ledger(Path(sys.argv[1]), lock_timeout_s=5).connect() as con:\n"
                              "    print(con.execute('SELECT count(*) FROM t').fetchone()[0])", str(path)],
                             capture_output=True, text=True, timeout=60, check=False)
        assert out.returncode == 0 and out.stdout.strip() == "3", out.stderr
    # The host is gone, its file and socket with it; the file holds every committed row.
    assert not host_file(path).exists() and find_host(path) is None
    assert not Path(doc["socket"]).exists()
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM t").fetchone() == (3,)
    finally:
        con.close()


def test_a_client_that_dies_mid_unit_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ledger.duckdb"
    with ledger_host(path):
        led = Ledger(path)
        with led.connect() as con:
            con.execute("CREATE TABLE t (k INTEGER)")
        code = ("import os, sys; from pathlib import Path; from kavi.ledger.store import Ledger\n"
                "ctx = Ledger(Path(sys.argv[1])).connect(); con = ctx.__enter__()\n"
                "con.execute('INSERT INTO t VALUES (1)')\n"
                "os._exit(9)")
        died = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, timeout=60, check=False)
        assert died.returncode == 9
        with led.connect() as con:  # the dead unit's session was released, and its insert rolled back
            assert con.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_a_unit_that_waits_too_long_gets_the_locked_error(tmp_path: Path) -> None:
    path = tmp_path / "ledger.duckdb"
    with ledger_host(path):
        holder = Ledger(path)
        with holder.connect() as con:
            con.execute("SELECT 1")
            with pytest.raises(LedgerLockedError, match="granted no unit of work within 1s"), \
                    Ledger(path, lock_timeout_s=1.0).connect():
                pass


def test_a_second_host_for_the_same_file_is_not_started(tmp_path: Path) -> None:
    path = tmp_path / "ledger.duckdb"
    with ledger_host(path) as first, ledger_host(path) as second:
        assert first is not None and second is None


def test_a_stale_host_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "ledger.duckdb"
    host_file(path).write_text(json.dumps({"socket": str(tmp_path / "gone"), "pid": 2 ** 22 - 3, "host": "",
                                           "start": ""}))
    assert find_host(path) is None
    with Ledger(path, lock_timeout_s=2).connect() as con:  # straight to the file
        assert con.execute("SELECT 42").fetchone() == (42,)
    assert ledger_host_module.HOST_SUFFIX == ".host"


@pytest.mark.slow  # eight Python processes
def test_eight_writer_processes_through_the_host(tmp_path: Path) -> None:
    path = tmp_path / "ledger.duckdb"
    writers, n = 8, 25
    with ledger_host(path):
        stats = run_writers(path, writers, n)
    rows = ForgeRecords(Ledger(path)).model_outcomes()
    assert len(rows) == writers * n and len({r["build_id"] for r in rows}) == writers * n
    # Every unit went through the host: opened without a single retry at the file lock.
    assert sum(s["opens"] for s in stats) >= writers * n and sum(s["retries"] for s in stats) == 0


def test_a_stopped_host_finishes_the_unit_in_flight_then_exits(tmp_path: Path) -> None:
    """SIGTERM (a batch that has ended stops its host while stopping its daemon) ends the host's accept loop at once;
    the unit of work already open still commits before the file is closed, and the host exits cleanly."""
    path = tmp_path / "ledger.duckdb"
    with ledger_host(path) as pid:
        assert pid is not None
        led = Ledger(path)
        with led.connect() as con:
            con.execute("CREATE TABLE t (k INTEGER)")
            con.execute("INSERT INTO t VALUES (1)")
            os.kill(pid, signal.SIGTERM)
            con.execute("INSERT INTO t VALUES (2)")
        for _ in range(600):  # the host's own exit, not the context's (which would terminate it again)
            if find_host(path) is None:
                break
            time.sleep(0.05)
        assert find_host(path) is None
    con2 = duckdb.connect(str(path), read_only=True)
    try:
        assert con2.execute("SELECT k FROM t ORDER BY k").fetchall() == [(1,), (2,)]
    finally:
        con2.close()


def test_a_client_of_the_hosts_own_code_skips_the_schema_check(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The host brought the schema up to date when it started and says which version at every open: a client of
    the same code then reads no schema tables (two reads a unit of work saved); one of other code still checks."""
    path = tmp_path / "ledger.duckdb"
    sent: list[str] = []
    execute = ledger_host_module.RemoteConnection.execute

    def recording(self: ledger_host_module.RemoteConnection, sql: str, params: Any = None) -> Any:
        sent.append(sql)
        return execute(self, sql, params)

    monkeypatch.setattr(ledger_host_module.RemoteConnection, "execute", recording)
    with ledger_host(path):
        with Ledger(path).connect() as con:
            assert con.schema_version == SCHEMA_VERSION  # type: ignore[attr-defined]
            assert con.execute("SELECT count(*) FROM proposals").fetchone() == (0,)
        assert not any("schema_version" in sql or "information_schema" in sql for sql in sent), sent
        sent.clear()
        opened = ledger_host_module.RemoteConnection.__init__

        def older_host(self: ledger_host_module.RemoteConnection, *args: Any) -> None:
            opened(self, *args)
            self.schema_version = None  # what a host of older code (no version in its answer) looks like

        monkeypatch.setattr(ledger_host_module.RemoteConnection, "__init__", older_host)
        with Ledger(path).connect() as con:
            con.execute("SELECT count(*) FROM proposals")
        assert any("schema_version" in sql for sql in sent), sent
