"""The Dagster side of the CLI: a persistent DAGSTER_HOME, dynamic partitions, and in-process forge runs."""

import json
import os
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kavi.home import KaviHome
from kavi.process_env import export
from kavi.settings import read_setting

_HEADER = "# Written by kavi. Runs queue and at most two run at once; see the README to scale out.\n"
_QUEUE = """\
run_coordinator:
  module: dagster.core.run_coordinator
  class: QueuedRunCoordinator
  config:
    max_concurrent_runs: 2
telemetry:
  enabled: false
"""
# What kavi wrote before run monitoring was on: such a file is rewritten, a file edited by a person is left alone.
_PREVIOUS_DAGSTER_YAML = _HEADER + _QUEUE
# Run monitoring (dagster-daemon): runs stuck STARTING and runs stuck CANCELING fail after 3 minutes, and a run
# that runs for more than an hour is terminated and failed. The default run launcher has no worker health check,
# so a run whose process was killed stays STARTED until then; the stale_run_sweep sensor, `kavi doctor --fix` and
# every `kavi forge` mark such runs failed at once (their process's pid, host and start time are run tags).
_MONITORED_DAGSTER_YAML = _PREVIOUS_DAGSTER_YAML + """\
run_monitoring:
  enabled: true
  start_timeout_seconds: 180
  cancel_timeout_seconds: 180
  max_runtime_seconds: 3600
  poll_interval_seconds: 30
"""
# A run launched from the shell (`dagster job execute`, `dagster asset materialize`) prints INFO and above, not
# every DEBUG event; the UI still records and shows every event. The CLI's own runs set their level themselves.
_LOGGED_DAGSTER_YAML = _MONITORED_DAGSTER_YAML + """\
python_logs:
  python_log_level: INFO
"""
# Run workers of the forge's location fork from a host that imported Dagster and the forge once
# (kavi_assets/launcher): the queue, its limits and run monitoring are unchanged, a run starts in milliseconds
# instead of importing everything again, and the run monitor can check each worker's health.
_LAUNCHER_DAGSTER_YAML = _LOGGED_DAGSTER_YAML + """\
run_launcher:
  module: kavi_assets.launcher
  class: PreforkRunLauncher
"""
# Dagster's SQLite storage, the same files in the same folders of DAGSTER_HOME, keeping one SQLAlchemy engine per
# database file instead of building one per event (kavi_assets/launcher/storage.py). Its folder is written out as
# an absolute path (not `env: DAGSTER_HOME`), so the instance opens the same from a folder name alone; a home that
# was moved or copied has its kavi-written file rewritten with its own folder before anything opens it.
_STORAGE = """\
storage:
  custom:
    module: kavi_assets.launcher.storage
    class: KaviSqliteStorage
    config:
      base_dir: {base_dir}
"""
_BASE_DIR_LINE = re.compile(r"^      base_dir: (.*)$", re.MULTILINE)
_PLACEHOLDER = "<DAGSTER_HOME>"
# The files earlier kavi versions wrote: rewritten with this version's text, a file edited by a person is kept.
_OLDER = (_PREVIOUS_DAGSTER_YAML, _MONITORED_DAGSTER_YAML, _LOGGED_DAGSTER_YAML, _LAUNCHER_DAGSTER_YAML)


def dagster_yaml(folder: Path) -> str:
    """The dagster.yaml kavi writes into the DAGSTER_HOME `folder` (queue limits at their default)."""
    # A JSON string is a YAML double-quoted scalar: any character of a path reads back as itself.
    return _LAUNCHER_DAGSTER_YAML + _STORAGE.format(base_dir=json.dumps(str(Path(folder).resolve())))


def dagster_own_yaml() -> str:
    """The dagster.yaml above with Dagster's own run launcher and SQLite storage in place of kavi's (same queue, run
    monitoring and logging): a home without the private layer, for measuring what that layer carries."""
    return _LOGGED_DAGSTER_YAML


def _template(text: str) -> str:
    """The text with its storage folder replaced by a placeholder (kavi's files differ only there)."""
    return _BASE_DIR_LINE.sub(lambda m: f"      base_dir: {_PLACEHOLDER}", text, count=1)


_TEMPLATE = _template(dagster_yaml(Path("/")))  # this version's file, its folder a placeholder


def ensure_dagster_home(home: KaviHome) -> Path:
    """Honour DAGSTER_HOME when set; otherwise use <KAVI_HOME>/dagster so runs and partitions persist."""
    raw = read_setting("dagster_home")
    path = Path(raw).expanduser().resolve() if raw else home.root / "dagster"
    path.mkdir(parents=True, exist_ok=True)
    cfg = path / "dagster.yaml"
    text = cfg.read_text(encoding="utf-8") if cfg.exists() else None
    # A first file, an earlier kavi's file or kavi's file of a home that was moved: this version's, for this folder.
    new = dagster_yaml(path) if text is None else _rewritten(text, path)
    if new is not None and new != text:
        _write_whole(cfg, new)
    export({"DAGSTER_HOME": str(path)})  # Dagster opens the instance of DAGSTER_HOME: this process's runs and sensors
    return path


def _write_whole(cfg: Path, text: str) -> None:
    # Written whole or not at all: another kavi starting at the same moment never reads half a file.
    tmp = cfg.with_name(f".dagster.yaml.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, cfg)


# `kavi forge --all` and `kavi demo --concurrency N` set the queue's limits (kavi_assets/cli/parallel.py).
# A file kavi wrote (any of the texts above, or this one with other numbers) is rewritten with the new limits; a
# file a person edited is left alone and its own limits hold.
_ENDPOINT_LIMIT = """\
    tag_concurrency_limits:
      - key: kavi/endpoint
        value:
          applyLimitPerUniqueValue: true
        limit: {endpoint}
"""


# The daemon looks at the queue every 5 s by default: a slot freed by a finished run would idle 2.5 s on average.
# Every second, and launches from threads, so eight runs starting at once do not wait on one another.
_DEQUEUE = """\
    dequeue_interval_seconds: 1
    dequeue_use_threads: true
"""


def _render(base: str, max_runs: int, endpoint_limit: int | None) -> str:
    line = f"max_concurrent_runs: {int(max_runs)}\n"
    extra = _DEQUEUE + (_ENDPOINT_LIMIT.format(endpoint=int(endpoint_limit)) if endpoint_limit is not None else "")
    return base.replace("max_concurrent_runs: 2\n", line + extra, 1)


def render_dagster_yaml(folder: Path, max_runs: int, endpoint_limit: int | None) -> str:
    """dagster.yaml for the DAGSTER_HOME `folder` with `max_concurrent_runs`, a dequeue every second and, when
    given, a limit of runs per model endpoint (run tag `kavi/endpoint`)."""
    return _render(dagster_yaml(folder), max_runs, endpoint_limit)


def _rewritten(text: str, folder: Path) -> str | None:
    """This version's dagster.yaml for `folder` in place of `text` when kavi wrote `text` (any version, any folder,
    its queue limits kept); None when a person wrote or edited it (left alone)."""
    if text in _OLDER:
        return dagster_yaml(folder)
    shape = _template(text)
    if shape == _TEMPLATE:
        return dagster_yaml(folder)
    runs = re.search(r"max_concurrent_runs: (\d+)\n", text)
    if runs is None:
        return None
    limit_m = re.search(r"\n        limit: (\d+)\n", text)
    max_runs, limit = int(runs.group(1)), int(limit_m.group(1)) if limit_m else None
    # This version's text, or one before the storage or the run launcher was added (rewritten with them).
    for base in (_TEMPLATE, _LAUNCHER_DAGSTER_YAML, _LOGGED_DAGSTER_YAML):
        if shape == _render(base, max_runs, limit):
            return render_dagster_yaml(folder, max_runs, limit)
    return None


def configure_queue(dagster_home: Path, max_runs: int, endpoint_limit: int | None) -> bool:
    """Write the queue's limits into DAGSTER_HOME/dagster.yaml (whole or not at all); False when a person's own
    file is there (left alone: its limits hold)."""
    cfg = dagster_home / "dagster.yaml"
    if cfg.exists() and _rewritten(cfg.read_text(encoding="utf-8"), dagster_home) is None:
        return False
    _write_whole(cfg, render_dagster_yaml(dagster_home, max_runs, endpoint_limit))
    return True


def instance() -> Any:
    """The instance of DAGSTER_HOME. Opening it creates and migrates its storage the first time, which two
    processes doing at once make fail (both create the schema): the opening is serialised by a file lock."""
    import fcntl

    from dagster import DagsterInstance

    raw = read_setting("dagster_home")
    if not raw:
        return DagsterInstance.get()
    with open(Path(raw) / ".kavi-instance.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return DagsterInstance.get()


def add_partition(name: str) -> bool:
    return bool(add_partitions([name]))


def add_partitions(names: Sequence[str]) -> list[str]:
    """Add the proposals' partitions that are missing, with one instance (opening one costs a tenth of a second);
    returns the names added."""
    inst = instance()
    known = set(inst.get_dynamic_partitions("proposals"))
    missing = list(dict.fromkeys(n for n in names if n not in known))
    if missing:
        inst.add_dynamic_partitions("proposals", missing)
    return missing


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    success: bool
    failed_steps: list[str]
    # Failures other than a gate's blocking check (which is an expected outcome, recorded in the ledger).
    errors: list[str]


def run_job(
    job_name: str,
    partition_key: str | None,
    tags: Mapping[str, str] | None = None,
    resources: Mapping[str, Any] | None = None,
    home: KaviHome | None = None,
) -> RunOutcome:
    """Execute one job of the code location in this process, recorded in DAGSTER_HOME (visible in the UI); with
    `home`, its resources use that skills home (else KAVI_HOME's)."""
    from kavi.process_owner import ProcessOwner
    from kavi_assets.definitions import current_definitions
    from kavi_assets.launcher.storage import connections_held

    if home is not None:
        resources = {**home_resources(home), **(resources or {})}
    job = current_definitions().resolve_job_def(job_name)
    run_id = str(uuid.uuid4())
    try:
        # While the run writes its events, the closes of Dagster's connections do not checkpoint the WAL.
        with _held_storage_warnings(), connections_held():
            result = job.execute_in_process(
                partition_key=partition_key,
                # The CLI prints its own summary; Dagster's step log stays in the run's record in the UI.
                run_config={"loggers": {"console": {"config": {"log_level": read_setting("dagster_log")}}}},
                instance=instance(),
                raise_on_error=False,
                run_id=run_id,
                # Which process executes the run: a sweep marks the run failed if this process dies (sensors/sweep.py).
                tags={**ProcessOwner.current().tags(), **dict(tags or {})},
                resources=dict(resources) if resources else None,
            )
    except Exception as err:
        from kavi.infrastructure import is_disk_full

        if not is_disk_full(err, _storage_paths(home)):
            raise
        raise DiskFullDuringRun(run_id) from err
    failed, errors = step_failures(result.all_events)
    return RunOutcome(result.run_id, result.success, failed, errors)


class DiskFullDuringRun(Exception):
    """Dagster's own storage met a full disk while it ran `run_id` (the run may be left STARTED: see
    close_run_failed)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"the disk filled up during run {run_id}")
        self.run_id = run_id


def _storage_paths(home: KaviHome | None) -> list[Path]:
    paths = [Path(p) for p in (read_setting("dagster_home"),) if p]
    return paths + ([home.root] if home is not None else [])


@contextmanager
def _held_storage_warnings() -> Iterator[None]:
    """Dagster writes "Exception while writing logger call to event log" to stderr itself when its event log cannot
    take a log line (a full disk); the CLI says what happened in one line of its own, so those are held back."""
    import sys

    real = sys.stderr

    class Filtered:
        def write(self, text: str) -> int:
            if text.startswith("Exception while writing logger call to event log"):
                return len(text)
            return real.write(text)

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

    sys.stderr = Filtered()
    try:
        yield
    finally:
        sys.stderr = real


def close_run_failed(run_id: str) -> bool:
    """Mark a run this process started and could not finish as FAILURE (so no sweep is needed); False if the
    storage still refuses."""
    try:
        inst = instance()
        run = inst.get_run_by_id(run_id)
        if run is None or run.is_finished:
            return run is not None
        inst.report_run_failed(run)
        return True
    except Exception:
        return False


def home_resources(home: KaviHome) -> dict[str, Any]:
    """The resources that name the skills home, bound to `home`."""
    from resources.attempt_lock import AttemptLockResource
    from resources.home import SkillsHomeResource

    bound = SkillsHomeResource(root=str(home.root))
    return {"home": bound, "attempt_lock": AttemptLockResource(home=bound)}


def step_failures(events: Any) -> tuple[list[str], list[str]]:
    """The failed steps of a run's events, and the root causes of those that are not a gate's blocking check."""
    import dagster as dg

    failed: list[str] = []
    errors: list[str] = []
    for ev in events:
        if ev.event_type_value != dg.DagsterEventType.STEP_FAILURE.value:
            continue
        failed.append(ev.step_key or "?")
        data = ev.step_failure_data
        err = data.error if data is not None else None
        if err is not None and err.cls_name != "DagsterAssetCheckFailedError":
            # The root cause (the innermost exception), not Dagster's DagsterExecutionStepExecutionError wrapper.
            from kavi_assets.cli.errors import root_cause

            errors.append(f"step {ev.step_key} failed: {root_cause(err, data.user_failure_data if data else None)}")
    return failed, errors


def sweep_before_launch(home: KaviHome) -> Any:
    """Mark runs of dead processes failed and close the attempts they left, before this process launches a run
    (sandboxes of closed attempts are removed; the full sandbox scan is `kavi doctor`'s)."""
    from sensors.sweep import sweep

    return sweep(home, instance(), fix=True, sandboxes=False)


@contextmanager
def quiet_dagster_logs() -> Iterator[None]:
    """Dagster log records below the CLI's level ($KAVI_DAGSTER_LOG, CRITICAL by default) are not printed while
    the CLI evaluates a sensor in process: a sensor context logs through its own console handler at INFO."""
    import logging

    level = logging.getLevelName(read_setting("dagster_log"))
    threshold = level if isinstance(level, int) else logging.CRITICAL
    previous = logging.root.manager.disable
    logging.disable(max(previous, threshold - 1))
    try:
        yield
    finally:
        logging.disable(previous)
