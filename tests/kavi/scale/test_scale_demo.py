"""`kavi scale-demo`, run for real: PostgreSQL, Redis and two Celery workers on loopback, example proposals forged
through the workers into one shared ledger, compared with the same proposals forged sequentially by `kavi demo`."""

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from kavi.scale.services import missing_binaries
from kavi_assets.cli.example_proposals import examples_dir
from tests.factories import run_kavi
from tests.lake_support import lake_skip_reason

pytestmark = pytest.mark.scale

# A first attempt that verifies, one that fails ruff and is retried by the retry sensor, one refused by the diff
# allowlist (GATE_VIOLATION), and one more that verifies: every path a run can take, in about a minute of work.
SUBSET = ("word_count", "slugify_title", "extract_emails", "parse_duration")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("KAVI_LEDGER_URL", "KAVI_LEDGER_DATA", "DAGSTER_HOME", "KAVI_HOME", "KAVI_LLM_BASE_URL")}
    env.update(KAVI_RECORDED_SPEED="0", **extra)
    return env


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2:].startswith("Z")


def test_scale_demo_runs_on_two_workers_into_one_ledger(tmp_path: Path) -> None:
    reason = lake_skip_reason() or (
        "the broker needs redis-server (apt-get install redis-server)" if "redis-server" in missing_binaries()
        else None)
    if reason:
        pytest.skip(reason)
    folder = tmp_path / "proposals"
    folder.mkdir()
    for name in SUBSET:
        shutil.copy(examples_dir() / f"{name}.yaml", folder)

    proc = run_kavi(["scale-demo", "--examples", str(folder), "--workdir", str(tmp_path / "scale"), "--json"], _env())
    assert proc.returncode == 0, proc.stderr[-4000:]
    doc: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])

    workers = set(doc["worker_pids"].values())
    assert len(workers) == 2
    runs = doc["runs"]
    forge_runs = [r for r in runs if r["job"] == "forge"]
    assert all(r["status"] == "SUCCESS" for r in runs), runs
    # Dagster's own record of the process that executed each run: always one of the two workers, and both worked.
    assert {r["worker_pid"] for r in runs} == workers, runs
    assert all(r["worker_pid"] not in doc["service_pids"].values() for r in runs)
    # The run's coordinator and its steps ran in that one worker process (in-process executor, run-level launch).
    assert all(r["step_pids"] == [r["worker_pid"]] for r in runs), runs
    # The attempt lock's owner tag names the same process (the run held the lock where it ran).
    assert all(r["tag_pid"] == r["worker_pid"] for r in forge_runs), forge_runs
    # One ledger holds every run's attempt, each attempt once.
    led = doc["ledger"]
    assert set(led["run_ids"]) == {r["run_id"] for r in forge_runs}
    assert led["builds"] == led["distinct_builds"] == led["distinct_attempts"] == len(forge_runs)
    assert led["promotion_chain_problems"] == []
    code, report = doc["cli_checks"]["verify"]
    assert code == 0 and report["ok"], report
    (lineage_cmd, (code, lineage)), = [(k, v) for k, v in doc["cli_checks"].items() if k.startswith("lineage")]
    assert code == 0 and lineage["attempts"], lineage_cmd
    # Everything the command started is stopped.
    assert all(_gone(pid) for pid in [*workers, *doc["service_pids"].values()])

    # The same proposals forged one at a time, in process, into a ledger file: the same verdicts.
    seq_env = _env(KAVI_HOME=str(tmp_path / "sequential"))
    demo = run_kavi(["demo", "--examples", str(folder)], seq_env)
    assert demo.returncode == 0, demo.stdout[-3000:]
    status = run_kavi(["status", "--json"], seq_env)
    assert status.returncode == 0, status.stderr
    sequential = {r["name"]: r["status"] for r in json.loads(status.stdout)}
    assert doc["verdicts"] == sequential
    assert sequential["extract_emails"] == "GATE_VIOLATION" and sequential["word_count"] == "TRUSTED"
