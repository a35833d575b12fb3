"""The instance storage kavi's dagster.yaml names (kavi_assets/launcher/storage.py): Dagster's SQLite files and
schema in DAGSTER_HOME, one SQLAlchemy engine per database file per process, and a home written by Dagster's
default storage reads the same through it."""

import os
from pathlib import Path

import dagster as dg
import pytest
import yaml

from kavi_assets.cli.dagster_env import _OLDER, DAGSTER_YAML, ensure_dagster_home
from kavi_assets.home import KaviHome
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
    assert (home / "dagster.yaml").read_text() == DAGSTER_YAML
    with dg.DagsterInstance.get() as inst:
        assert isinstance(inst.event_log_storage, KaviEventLogStorage)
        run = inst.get_run_by_id(before.run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        assert len(inst.all_logs(before.run_id)) == n_events
        after = tiny.execute_in_process(instance=inst)
        assert {r.dagster_run.run_id for r in inst.get_run_records()} == {before.run_id, after.run_id}


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
