"""The instance storage kavi's dagster.yaml names (kavi_assets/launcher/storage.py): Dagster's SQLite files and
schema in DAGSTER_HOME, one SQLAlchemy engine per database file per process, and a home written by Dagster's
default storage reads the same through it."""

import os
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pytest
import yaml

from kavi.home import KaviHome
from kavi_assets.cli.dagster_env import _OLDER, configure_queue, dagster_own_yaml, dagster_yaml, ensure_dagster_home
from kavi_assets.launcher.storage import Engines, KaviEventLogStorage, KaviRunStorage, KaviSqliteStorage


@dg.op
def hello() -> int:
    return 1


@dg.job
def tiny() -> None:
    hello()


@pytest.fixture
def dagster_home(tmp_path: Path, kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dh"))
    return ensure_dagster_home(kavi_home)


def test_kavi_dagster_yaml_names_the_storage_with_dagsters_own_files(dagster_home: Path) -> None:
    cfg = yaml.safe_load((dagster_home / "dagster.yaml").read_text())
    assert cfg["storage"]["custom"]["class"] == "KaviSqliteStorage"
    with dg.DagsterInstance.get() as inst:
        assert isinstance(inst.run_storage, KaviRunStorage)
        assert isinstance(inst.event_log_storage, KaviEventLogStorage)
        result = tiny.execute_in_process(instance=inst)
        assert result.success
        run_id = result.run_id
        # Where Dagster's default SQLite storage keeps them.
        assert (dagster_home / "history" / "runs.db").is_file()
        assert (dagster_home / "history" / "runs" / "index.db").is_file()
        assert (dagster_home / "history" / "runs" / f"{run_id}.db").is_file()
        assert (dagster_home / "schedules" / "schedules.db").is_file()
        # Every event of the run went through one engine for its shard (and one for the index): not one per event.
        events = inst.all_logs(run_id)
        assert len(events) > 10
        assert len(inst.event_log_storage._engines) <= 3
        # A run worker's instance (rebuilt from the instance's reference) uses the same classes.
        with dg.DagsterInstance.from_ref(inst.get_ref()) as worker:
            assert isinstance(worker.event_log_storage, KaviEventLogStorage)
            assert isinstance(worker.run_storage, KaviRunStorage)
            assert len(worker.all_logs(run_id)) == len(events)


def test_a_home_written_by_dagsters_default_storage_reads_the_same(tmp_path: Path, kavi_home: KaviHome,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "dh"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    older = _OLDER[-1]  # the file the previous kavi wrote: Dagster's default storage
    assert "storage:" not in older
    (home / "dagster.yaml").write_text(older)
    with dg.DagsterInstance.get() as inst:
        assert not isinstance(inst.event_log_storage, KaviEventLogStorage)
        before = tiny.execute_in_process(instance=inst)
        n_events = len(inst.all_logs(before.run_id))
    ensure_dagster_home(kavi_home)  # kavi's own older file: rewritten with the storage
    assert (home / "dagster.yaml").read_text() == dagster_yaml(home)
    with dg.DagsterInstance.get() as inst:
        assert isinstance(inst.event_log_storage, KaviEventLogStorage)
        run = inst.get_run_by_id(before.run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        assert len(inst.all_logs(before.run_id)) == n_events
        after = tiny.execute_in_process(instance=inst)
        assert {r.dagster_run.run_id for r in inst.get_run_records()} == {before.run_id, after.run_id}


def test_dagsters_own_file_is_kavis_without_the_launcher_package(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The file `forge_throughput.py --dagster-storage dagster` runs on: kavi's queue, monitoring and logging, with
    Dagster's own storage and run launcher."""
    own = yaml.safe_load(dagster_own_yaml())
    kavis = yaml.safe_load(dagster_yaml(tmp_path))
    assert "kavi_assets" not in dagster_own_yaml()
    assert {k: v for k, v in kavis.items() if k not in ("storage", "run_launcher")} == own
    home = tmp_path / "dh"
    home.mkdir()
    (home / "dagster.yaml").write_text(dagster_own_yaml())
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as inst:
        assert not isinstance(inst.event_log_storage, KaviEventLogStorage)
        assert not isinstance(inst.run_storage, KaviRunStorage)
        assert type(inst.run_launcher) is dg.DefaultRunLauncher
        assert tiny.execute_in_process(instance=inst).success


def test_the_instance_opens_from_its_folder_alone(dagster_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A script (or Dagster's own tools) opening the instance by folder, with no DAGSTER_HOME in its environment.
    monkeypatch.delenv("DAGSTER_HOME")
    with dg.DagsterInstance.from_config(str(dagster_home)) as inst:
        assert isinstance(inst.event_log_storage, KaviEventLogStorage)
        result = tiny.execute_in_process(instance=inst)
        assert result.success
    assert (dagster_home / "history" / "runs" / f"{result.run_id}.db").is_file()


def test_a_moved_home_gets_its_own_folder_and_keeps_its_limits(tmp_path: Path, kavi_home: KaviHome,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = tmp_path / "old" / "dh", tmp_path / "new" / "dh"
    old.mkdir(parents=True)
    assert configure_queue(old, 8, 3)
    new.parent.mkdir()
    old.rename(new)  # the whole home moved: its file still names the old folder
    assert str(old) in (new / "dagster.yaml").read_text()
    monkeypatch.setenv("DAGSTER_HOME", str(new))
    ensure_dagster_home(kavi_home)
    text = (new / "dagster.yaml").read_text()
    assert str(old) not in text
    cfg = yaml.safe_load(text)
    assert cfg["storage"]["custom"]["config"]["base_dir"] == str(new.resolve())
    assert cfg["run_coordinator"]["config"]["max_concurrent_runs"] == 8  # the limits stay
    with dg.DagsterInstance.get() as inst:
        assert tiny.execute_in_process(instance=inst).success
    assert not old.exists()  # nothing was written where the home used to be
    # A person's file naming some folder is theirs: left alone.
    mine = text + "# mine\n"
    (new / "dagster.yaml").write_text(mine.replace(str(new.resolve()), str(old)))
    ensure_dagster_home(kavi_home)
    assert (new / "dagster.yaml").read_text() == mine.replace(str(new.resolve()), str(old))


def test_a_folder_with_quotes_and_spaces_reads_back(tmp_path: Path) -> None:
    odd = tmp_path / 'a "quoted" folder: with # signs \\ and é'
    odd.mkdir()
    cfg = yaml.safe_load(dagster_yaml(odd))
    assert cfg["storage"]["custom"]["config"]["base_dir"] == str(odd.resolve())


def test_engines_are_kept_per_url_up_to_a_limit(tmp_path: Path) -> None:
    engines = Engines(limit=2)
    urls = [f"sqlite:///{tmp_path / f'{i}.db'}" for i in range(3)]
    first = engines.get(urls[0])
    assert engines.get(urls[0]) is first
    engines.get(urls[1])
    engines.get(urls[2])  # the least recently used (urls[0]) is dropped
    assert len(engines) == 2
    assert engines.get(urls[0]) is not first


def test_a_forked_child_builds_its_own_engines(tmp_path: Path) -> None:
    engines = Engines()
    url = f"sqlite:///{tmp_path / 'x.db'}"
    mine = engines.get(url)
    pid = os.fork()
    if pid == 0:
        os._exit(0 if engines.get(url) is not mine and len(engines) == 1 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert engines.get(url) is mine


def test_the_storage_reports_its_own_parts(tmp_path: Path) -> None:
    storage = KaviSqliteStorage.from_local(str(tmp_path))
    assert storage.event_storage_data is not None and storage.event_storage_data.class_name == "KaviEventLogStorage"
    assert storage.run_storage_data is not None and storage.run_storage_data.class_name == "KaviRunStorage"
    rebuilt = storage.event_storage_data.rehydrate(as_type=KaviEventLogStorage)
    assert isinstance(rebuilt, KaviEventLogStorage)


def _tables_and_revision(path: Path) -> tuple[set[str], str]:
    import sqlite3

    con = sqlite3.connect(path)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
        (rev,) = con.execute("SELECT version_num FROM alembic_version").fetchone()
        mode = con.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        con.close()
    return tables, f"{rev} {mode}"


def test_a_new_run_shard_is_the_one_dagster_would_create(tmp_path: Path) -> None:
    from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

    from kavi_assets.launcher.storage import head_revision

    ours, theirs = KaviEventLogStorage(str(tmp_path / "ours")), SqliteEventLogStorage(str(tmp_path / "theirs"))
    for storage in (ours, theirs):
        with storage._connect("run-1") as conn:
            conn.execute(__import__("sqlalchemy").text("SELECT 1"))
    mine, dagsters = (_tables_and_revision(tmp_path / d / "run-1.db") for d in ("ours", "theirs"))
    assert mine == dagsters
    assert mine[1] == f"{head_revision()} wal"


def test_a_database_behind_head_takes_dagsters_own_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from kavi_assets.launcher import storage as mod

    storage = KaviSqliteStorage.from_local(str(tmp_path))
    assert isinstance(storage.schedule_storage, mod.KaviScheduleStorage)
    runs_db = tmp_path / "history" / "runs.db"
    con = sqlite3.connect(runs_db)
    con.execute("UPDATE alembic_version SET version_num = 'older'")
    con.commit()
    con.close()
    slow: list[str] = []
    parent = mod.SqliteRunStorage.from_local.__func__  # type: ignore[attr-defined]

    def spy(cls: type, base_dir: str, inst_data: object = None) -> object:
        slow.append(base_dir)
        raise RuntimeError("Dagster's path")

    monkeypatch.setattr(mod.SqliteRunStorage, "from_local", classmethod(spy))
    with pytest.raises(RuntimeError, match="Dagster's path"):
        KaviRunStorage.from_local(str(tmp_path / "history"))
    assert slow == [str(tmp_path / "history")]
    monkeypatch.setattr(mod.SqliteRunStorage, "from_local", classmethod(parent))
    # At head (and with its instance table), the storage opens without Dagster's checks.
    con = sqlite3.connect(runs_db)
    con.execute("UPDATE alembic_version SET version_num = ?", (mod.head_revision(),))
    con.commit()
    con.close()
    monkeypatch.setattr(mod.SqliteRunStorage, "from_local", classmethod(spy))
    assert isinstance(KaviRunStorage.from_local(str(tmp_path / "history")), KaviRunStorage)
    assert slow == [str(tmp_path / "history")]


def _in_child(body: Callable[[], bool]) -> None:
    """`body` in a forked child that ends with os._exit, as a run worker does; asserts it returned True."""
    pid = os.fork()
    if pid == 0:
        ok = False
        try:
            ok = body()
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _write_one(storage: KaviEventLogStorage, shard: str) -> None:
    import sqlalchemy as sa

    with storage._connect(shard) as conn:
        conn.execute(sa.text("CREATE TABLE IF NOT EXISTS probe (n INTEGER)"))
        conn.execute(sa.text("INSERT INTO probe VALUES (1)"))


def test_connections_commit_with_normal_sync_in_wal(tmp_path: Path) -> None:
    import sqlalchemy as sa

    engine = Engines().get(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.connect() as conn:
        assert conn.execute(sa.text("PRAGMA synchronous")).scalar() == 1  # NORMAL (FULL is 2)


def test_a_holding_run_worker_never_checkpoints_on_close_and_others_read_its_writes(tmp_path: Path) -> None:
    import sqlite3

    from kavi_assets.launcher.storage import hold_connections, holding_connections

    base = tmp_path / "events"
    wal = base / "run-1.db-wal"
    assert not holding_connections()  # this test process does not hold, nor does anything it imported

    # Without holding, each close is the last one: it checkpoints the WAL into the database and deletes it.
    plain = KaviEventLogStorage(str(base))
    _write_one(plain, "run-0")
    assert not (base / "run-0.db-wal").exists()

    def worker() -> bool:
        hold_connections()
        storage = KaviEventLogStorage(str(base))
        for _ in range(3):
            _write_one(storage, "run-1")
        grandchild = os.fork()
        if grandchild == 0:  # a fork of a holding process does not hold
            os._exit(0 if not holding_connections() else 1)
        _, status = os.waitpid(grandchild, 0)
        # One idle connection kept to the shard: the closes after each write were not the last, the WAL stays.
        return (os.waitstatus_to_exitcode(status) == 0 and storage._engines.held() == [str(base / "run-1.db")]
                and wal.exists() and wal.stat().st_size > 0)

    _in_child(worker)
    # The worker ended without closing its connection (os._exit): every write is there for the next reader.
    con = sqlite3.connect(base / "run-1.db")
    try:
        assert con.execute("SELECT count(*) FROM probe").fetchone() == (3,)
        assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        con.close()
    assert not wal.exists()  # the reader's close was the last one: checkpointed


def test_a_holding_worker_runs_a_job_that_every_other_process_reads(dagster_home: Path) -> None:
    from kavi_assets.launcher.storage import hold_connections

    done = dagster_home / "run-id"

    def worker() -> bool:
        hold_connections()
        with dg.DagsterInstance.get() as inst:
            result = tiny.execute_in_process(instance=inst)
            done.write_text(result.run_id)
            held = inst.event_log_storage._engines.held()  # type: ignore[attr-defined]
            return result.success and any(p.endswith(f"{result.run_id}.db") for p in held)

    _in_child(worker)
    with dg.DagsterInstance.get() as inst:
        run = inst.get_run_by_id(done.read_text())
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        types = [e.dagster_event.event_type_value for e in inst.all_logs(run.run_id) if e.dagster_event]
        assert types[0] == "PIPELINE_START" and types[-1] == "PIPELINE_SUCCESS"  # run start and success


def test_a_run_in_this_process_holds_only_while_it_runs(dagster_home: Path) -> None:
    """`connections_held` (kavi forge NAME, kavi demo): during the run its closes leave the WAL; when it ends the idle
    connections are closed, the WALs checkpointed once, and the process holds nothing until its next run."""
    from kavi_assets.launcher.storage import connections_held, holding_connections

    shards = dagster_home / "history" / "runs"
    with dg.DagsterInstance.get() as inst:
        engines = inst.event_log_storage._engines  # type: ignore[attr-defined]
        for _ in range(2):  # the second run holds again: nothing stays held between runs
            with connections_held():
                assert holding_connections()
                result = tiny.execute_in_process(instance=inst)
                held = engines.held()
                assert result.success and any(p.endswith(f"{result.run_id}.db") for p in held), held
                assert (shards / f"{result.run_id}.db-wal").exists()  # no close was the last one
            assert not holding_connections() and engines.held() == []
            assert not (shards / f"{result.run_id}.db-wal").exists()  # the keeper's close checkpointed it
            types = [e.dagster_event.event_type_value for e in inst.all_logs(result.run_id) if e.dagster_event]
            assert types[0] == "PIPELINE_START" and types[-1] == "PIPELINE_SUCCESS"


def test_the_batch_daemon_is_dagsters_own_command(tmp_path: Path) -> None:
    """kavi starts `python -m kavi_assets.launcher.daemon` for a batch: Dagster's dagster-daemon CLI itself (its
    commands and options), which only ends differently."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "kavi_assets.launcher.daemon", "run", "--help"], capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert "--workspace" in out.stdout and "--log-level" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "kavi_assets.launcher.daemon", "no-such-command"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "no-such-command" in bad.stderr
