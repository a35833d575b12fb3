"""The dagster.yaml files kavi writes: the home's is Dagster's own storage and run launcher (no kavi module named),
an earlier kavi's file is brought up to date, and a batch's own instance shares the home's storage with the
batch's limits and launcher."""

from pathlib import Path

import dagster as dg
import pytest
import yaml

from kavi.home import KaviHome
from kavi_assets.cli.dagster_env import (
    _OLD_LAUNCHER_DAGSTER_YAML,
    _OLD_STORAGE,
    DAGSTER_YAML,
    PREFORK_LAUNCHER,
    batch_dagster_yaml,
    configure_batch,
    dagster_yaml,
    ensure_dagster_home,
    render_dagster_yaml,
)


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


def test_the_homes_dagster_yaml_is_dagsters_own_storage_and_launcher(dagster_home: Path) -> None:
    text = (dagster_home / "dagster.yaml").read_text()
    assert text == DAGSTER_YAML
    assert "kavi" not in text.replace("# Written by kavi", "")
    cfg = yaml.safe_load(text)
    assert "storage" not in cfg and "run_launcher" not in cfg
    with dg.DagsterInstance.get() as inst:
        assert type(inst.run_launcher).__name__ == "DefaultRunLauncher"
        result = tiny.execute_in_process(instance=inst)
        assert result.success
    # Where Dagster's default SQLite storage keeps them.
    assert (dagster_home / "history" / "runs.db").is_file()
    assert (dagster_home / "history" / "runs" / f"{result.run_id}.db").is_file()


@pytest.mark.parametrize("limits", [None, (8, 3), (4, None)])
def test_an_earlier_kavis_file_is_rewritten_and_keeps_its_limits(tmp_path: Path, kavi_home: KaviHome,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 limits: tuple[int, int | None] | None) -> None:
    home = tmp_path / "dh"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    older = _OLD_LAUNCHER_DAGSTER_YAML + _OLD_STORAGE.format(base_dir='"/some/where/else"')
    if limits is not None:
        older = older.replace("max_concurrent_runs: 2\n", f"max_concurrent_runs: {limits[0]}\n"
                              "    dequeue_interval_seconds: 1\n    dequeue_use_threads: true\n" + (
                                  "    tag_concurrency_limits:\n      - key: kavi/endpoint\n        value:\n"
                                  "          applyLimitPerUniqueValue: true\n"
                                  f"        limit: {limits[1]}\n" if limits[1] is not None else ""))
    (home / "dagster.yaml").write_text(older)
    ensure_dagster_home(kavi_home)
    text = (home / "dagster.yaml").read_text()
    assert text == (dagster_yaml() if limits is None else render_dagster_yaml(*limits))
    assert "kavi_assets" not in text
    # A person's own file is left alone.
    (home / "dagster.yaml").write_text(older + "# mine\n")
    ensure_dagster_home(kavi_home)
    assert (home / "dagster.yaml").read_text() == older + "# mine\n"


def test_a_batch_instance_shares_the_homes_storage(dagster_home: Path) -> None:
    folder, ours = configure_batch(dagster_home, 8, 3, prefork=True)
    assert ours and folder == dagster_home / "batch"
    cfg = yaml.safe_load((folder / "dagster.yaml").read_text())
    assert cfg["run_launcher"] == PREFORK_LAUNCHER
    assert cfg["run_coordinator"]["config"]["max_concurrent_runs"] == 8
    assert cfg["run_coordinator"]["config"]["tag_concurrency_limits"][0]["limit"] == 3
    with dg.DagsterInstance.from_config(str(folder)) as batch:
        run_id = tiny.execute_in_process(instance=batch).run_id
    # The home's instance (the UI's) sees the batch's run and its events.
    with dg.DagsterInstance.get() as inst:
        run = inst.get_run_by_id(run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        assert len(inst.all_logs(run_id)) > 5
    assert (dagster_home / "history" / "runs" / f"{run_id}.db").is_file()
    assert not (folder / "history").exists()
    # With Dagster's launcher asked for, none is named.
    configure_batch(dagster_home, 2, None, prefork=False)
    assert "run_launcher" not in yaml.safe_load((folder / "dagster.yaml").read_text())


def test_a_batch_keeps_a_persons_own_queue_and_launcher(dagster_home: Path) -> None:
    mine = DAGSTER_YAML.replace("max_concurrent_runs: 2", "max_concurrent_runs: 5") + (
        "run_launcher:\n  module: dagster\n  class: DefaultRunLauncher\n")
    (dagster_home / "dagster.yaml").write_text(mine)
    text, ours = batch_dagster_yaml(dagster_home, 8, None, prefork=True)
    assert not ours
    cfg = yaml.safe_load(text)
    assert cfg["run_coordinator"]["config"]["max_concurrent_runs"] == 5
    assert cfg["run_launcher"]["class"] == "DefaultRunLauncher"
    assert cfg["storage"]["sqlite"]["base_dir"] == str(dagster_home.resolve())


def test_a_folder_with_quotes_and_spaces_reads_back(tmp_path: Path) -> None:
    odd = tmp_path / 'a "quoted" folder: with # signs \\ and é'
    odd.mkdir()
    text, _ = batch_dagster_yaml(odd, 2, None, prefork=True)
    assert yaml.safe_load(text)["storage"]["sqlite"]["base_dir"] == str(odd.resolve())
