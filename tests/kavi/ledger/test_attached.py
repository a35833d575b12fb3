"""Ledger files attached to the process's one in-memory DuckDB database: the file's lock is held exactly while a
unit of work is open, units of work of several threads share one attachment, and a damaged file is still named."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pytest

from kavi.ledger import attached
from kavi.ledger.store import Ledger, LedgerCorruptError

_OPEN_ELSEWHERE = "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print(c.execute('select 1').fetchone()[0])"


def _another_process_can_open(path: Path) -> bool:
    res = subprocess.run([sys.executable, "-c", _OPEN_ELSEWHERE, str(path)], capture_output=True, text=True,
                         timeout=60)
    if res.returncode == 0:
        return True
    assert "lock" in res.stderr.lower(), res.stderr[-500:]
    return False


def _attached_here() -> set[str]:
    return {name for (name,) in attached._base().execute(
        "SELECT database_name FROM duckdb_databases() WHERE NOT internal AND database_name LIKE 'ledger_%'"
    ).fetchall()}


def test_the_file_is_locked_only_while_a_unit_of_work_is_open(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb")
    assert ledger.schema_version() > 0
    assert _another_process_can_open(ledger.path)
    with ledger.connect() as con:
        con.execute("CREATE TABLE probe (x INTEGER)")
        con.execute("INSERT INTO probe VALUES (1)")
        assert not _another_process_can_open(ledger.path)
    assert _another_process_can_open(ledger.path)
    assert not _attached_here()
    # What the unit of work wrote is in the file, for a plain connection of another process to read.
    res = subprocess.run([sys.executable, "-c", "import duckdb, sys; "
                          "print(duckdb.connect(sys.argv[1]).execute('select sum(x) from probe').fetchone()[0])",
                          str(ledger.path)], capture_output=True, text=True, timeout=60)
    assert res.stdout.strip() == "1", res.stderr[-500:]


def test_units_of_work_of_two_threads_share_one_attachment_and_release_it(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb")
    with ledger.connect() as con:
        con.execute("CREATE TABLE probe (who VARCHAR)")
    inside, leave = threading.Barrier(3), threading.Event()
    errors: list[BaseException] = []

    def work(who: str) -> None:
        try:
            with ledger.connect() as con:
                con.execute("INSERT INTO probe VALUES (?)", [who])
                inside.wait(30)
                leave.wait(30)
        except BaseException as err:  # reported by the test thread
            errors.append(err)

    threads = [threading.Thread(target=work, args=(who,)) for who in ("a", "b")]
    for t in threads:
        t.start()
    try:
        inside.wait(30)
        assert len(_attached_here()) == 1  # both units of work are open on one attachment
    finally:
        leave.set()
        for t in threads:
            t.join(30)
    assert not errors, errors
    assert not _attached_here()
    with ledger.connect() as con:
        assert sorted(r[0] for r in con.execute("SELECT who FROM probe").fetchall()) == ["a", "b"]


def test_a_failed_unit_of_work_rolls_back_and_releases_the_file(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb")
    with ledger.connect() as con:
        con.execute("CREATE TABLE probe (x INTEGER)")
    with pytest.raises(RuntimeError, match="halfway"), ledger.connect() as con:
        con.execute("INSERT INTO probe VALUES (1)")
        raise RuntimeError("halfway")
    assert not _attached_here()
    with ledger.connect() as con:
        assert con.execute("SELECT count(*) FROM probe").fetchone() == (0,)


def test_a_closed_connection_is_closed(tmp_path: Path) -> None:
    con = attached.attach(str(tmp_path / "x.duckdb"))
    con.close()
    con.close()  # twice is harmless
    with pytest.raises(duckdb.ConnectionException):
        con.execute("SELECT 1")


def test_a_file_that_is_not_a_ledger_is_named_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "ledger.duckdb"
    path.write_bytes(os.urandom(8192))
    with pytest.raises(LedgerCorruptError, match="corrupt or not a DuckDB database"):
        Ledger(path).schema_version()
    assert not _attached_here()


def test_a_forked_child_uses_an_instance_of_its_own(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb")
    with ledger.connect() as con:
        con.execute("CREATE TABLE probe (x INTEGER)")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own instance, the parent's never touched
        try:
            with ledger.connect() as con:
                con.execute("INSERT INTO probe VALUES (7)")
            ok = attached._bases[os.getpid()] is not attached._bases.get(os.getppid())
            os.write(write, b"ok" if ok else b"shared")
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.read(read, 16) == b"ok" and status == 0
    os.close(read)
    with ledger.connect() as con:
        assert con.execute("SELECT x FROM probe").fetchall() == [(7,)]
