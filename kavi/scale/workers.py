"""The scale configuration's files and worker processes: a DAGSTER_HOME whose instance storage is PostgreSQL and
whose run launcher hands each run to a Celery worker through the broker, and the workers themselves.

Why Celery and run-level distribution: the forge's jobs run in process (a step costs milliseconds, a new process
per step seconds, see DAGSTER-NOTES), and a forge run holds its proposal's attempt lock from its first step to its
end. dagster-celery's CeleryRunLauncher sends the whole run to one worker, which executes it in process; the broker
(Redis here, from Debian's packages) is the queue, and capacity is the number of workers, added on any machine that
reaches the broker, PostgreSQL and the shared path. A team already running Redis or RabbitMQ runs Celery with the
tools it knows (flower, `celery inspect`); Dask's executor distributes steps, not runs, and would split a run's
lock and its in-process step outputs across machines.
"""

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import yaml

CELERY_QUEUE = "dagster"
_CONFIG_MODULE = "dagster_celery_config"


def dagster_yaml(pg_url: str, broker_url: str, backend_url: str) -> str:
    """The instance of the scale configuration: PostgreSQL storage, runs launched as Celery tasks, no queue of
    Dagster's own (the broker queues; at most one run per worker executes at once)."""
    doc = {
        "storage": {"postgres": {"postgres_url": pg_url}},
        "run_launcher": {
            "module": "dagster_celery.launcher",
            "class": "CeleryRunLauncher",
            "config": {"default_queue": CELERY_QUEUE, "broker": broker_url, "backend": backend_url},
        },
        "run_coordinator": {"module": "dagster.core.run_coordinator", "class": "DefaultRunCoordinator"},
        "telemetry": {"enabled": False},
        "python_logs": {"python_log_level": "INFO"},
    }
    return "# Written by kavi scale-demo: the scale-out configuration (README, \"Scaling out\").\n" + yaml.safe_dump(
        doc, sort_keys=False)


def write_dagster_home(path: Path, pg_url: str, broker_url: str, backend_url: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "dagster.yaml").write_text(dagster_yaml(pg_url, broker_url, backend_url), encoding="utf-8")
    return path


def write_celery_config(folder: Path, broker_url: str, backend_url: str) -> Path:
    """The module dagster_celery's worker app reads its broker and result backend from (found on PYTHONPATH)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{_CONFIG_MODULE}.py").write_text(
        f"broker_url = {broker_url!r}\nresult_backend = {backend_url!r}\nworker_prefetch_multiplier = 1\n"
        "task_acks_late = True\nworker_hijack_root_logger = False\n", encoding="utf-8")
    return folder


def worker_command(name: str) -> list[str]:
    """One Celery worker executing one run at a time in its own process (the solo pool): the pid that executes a run
    is the worker's, which the run's kavi/pid tag then names."""
    return [sys.executable, "-m", "celery", "-A", "dagster_celery.app", "worker", "-Q", CELERY_QUEUE,
            "--pool=solo", "--concurrency=1", "--prefetch-multiplier=1", "-n", f"{name}@%h", "--loglevel=INFO",
            "--without-gossip", "--without-mingle"]


def worker_env(base: Mapping[str, str], config_dir: Path, settings: Mapping[str, str]) -> dict[str, str]:
    env = dict(base)
    env.update(settings)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(config_dir), base.get("PYTHONPATH", "")) if p)
    return env


def start_worker(name: str, env: Mapping[str, str], log: Path, cwd: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(worker_command(name), env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                                cwd=cwd, start_new_session=True)


def wait_ready(procs: Mapping[str, tuple[subprocess.Popen[bytes], Path]], timeout_s: float = 90.0) -> None:
    """Until every worker has logged that it is ready to take tasks (so the first runs do not all go to one)."""
    from kavi.scale.services import ServiceError

    deadline = time.monotonic() + timeout_s
    pending = dict(procs)
    while pending:
        for name, (proc, log) in list(pending.items()):
            if proc.poll() is not None:
                tail = log.read_text(encoding="utf-8", errors="replace")[-500:]
                raise ServiceError(f"worker {name} exited with code {proc.returncode}: {tail.strip()}")
            if " ready." in log.read_text(encoding="utf-8", errors="replace"):
                del pending[name]
        if not pending:
            return
        if time.monotonic() > deadline:
            raise ServiceError(f"workers {', '.join(pending)} were not ready within {timeout_s:.0f}s")
        time.sleep(0.2)
