"""Selecting the shared ledger by configuration: the file stays the default, a bad KAVI_LEDGER_URL is one line."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kavi.lake_config import LakeConfigError, lake_config
from kavi.ledger.store import Ledger
from kavi.scale.workers import dagster_yaml, worker_command

GOOD = "ducklake:postgres:host=127.0.0.1 port=5432 user=kavi dbname=kavi"


def test_unset_means_the_local_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAVI_LEDGER_URL", raising=False)
    led = Ledger(tmp_path / "ledger.duckdb")
    assert led.lake is None and led.label == str(tmp_path / "ledger.duckdb")
    led.migrate()
    assert (tmp_path / "ledger.duckdb").is_file()


def test_a_good_url_and_its_defaults(tmp_path: Path) -> None:
    cfg = lake_config({"KAVI_LEDGER_URL": GOOD + " password=s3cret"}, tmp_path)
    assert cfg is not None
    assert cfg.catalog["dbname"] == "kavi" and cfg.data_path == (tmp_path / "ledger-data").resolve()
    assert "s3cret" not in cfg.label and "s3cret" in cfg.dsn
    other = lake_config({"KAVI_LEDGER_URL": GOOD, "KAVI_LEDGER_DATA": str(tmp_path / "shared")}, tmp_path)
    assert other is not None and other.data_path == (tmp_path / "shared").resolve()
    assert other.lock_key != cfg.lock_key  # one advisory lock per data path


@pytest.mark.parametrize(("env", "needle"), [
    ({"KAVI_LEDGER_URL": "postgres://kavi@db/kavi"}, "must start with 'ducklake:postgres:'"),
    ({"KAVI_LEDGER_URL": "ducklake:postgres:host=db user=kavi"}, "dbname"),
    ({"KAVI_LEDGER_URL": "ducklake:postgres:dbname=kavi' (DATA_PATH '/"}, "key=value"),
    ({"KAVI_LEDGER_URL": "ducklake:postgres:dbname=kavi options=-csearch_path"}, "key=value"),
    ({"KAVI_LEDGER_URL": "ducklake:postgres:dbname=" + "k" * 2000}, "longer than"),
    ({"KAVI_LEDGER_URL": GOOD, "KAVI_LEDGER_DATA": "relative/dir"}, "absolute path"),
    ({"KAVI_LEDGER_URL": GOOD, "KAVI_LEDGER_DATA": "/data/it's"}, "quotes"),
])
def test_bad_settings_are_refused_before_any_connection(tmp_path: Path, env: dict[str, str], needle: str) -> None:
    with pytest.raises(LakeConfigError, match="KAVI_LEDGER") as err:
        lake_config(env, tmp_path)
    assert needle in str(err.value)


def test_the_cli_reports_a_bad_url_in_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, KAVI_HOME=str(tmp_path / "home"), KAVI_LEDGER_URL="sqlite:///x.db")
    proc = subprocess.run([sys.executable, "-m", "kavi_assets.cli", "status"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "KAVI_LEDGER_URL" in proc.stderr and len(proc.stderr.strip().splitlines()) <= 3


def test_validate_config_names_a_bad_ledger_url() -> None:
    from kavi.settings import config_problems

    problems = config_problems({"KAVI_LEDGER_URL": "ducklake:postgres:host=db"})
    assert len(problems) == 1 and "dbname" in problems[0]
    assert config_problems({"KAVI_LEDGER_URL": GOOD}) == []


def test_the_scale_instance_config() -> None:
    doc = yaml.safe_load(dagster_yaml("postgresql+psycopg2://kavi@127.0.0.1:5432/kavi", "redis://127.0.0.1:1/0",
                                      "redis://127.0.0.1:1/1"))
    assert doc["storage"]["postgres"]["postgres_url"].startswith("postgresql+psycopg2://")
    assert doc["run_launcher"]["class"] == "CeleryRunLauncher"
    assert doc["run_launcher"]["config"]["broker"] == "redis://127.0.0.1:1/0"
    cmd = worker_command("kavi-worker-1")
    assert "--pool=solo" in cmd and "dagster_celery.app" in cmd
