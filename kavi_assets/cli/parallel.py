"""Many forge runs at once on one machine, through Dagster's own queue.

`kavi forge --all` and `kavi demo --concurrency N` write a batch request into the home (kavi/forge/batch.py); the
batch sensor (sensors/batch.py) turns it into queued runs, one per proposal, and the QueuedRunCoordinator launches
them when a slot is free: at most `max_concurrent_runs` at once and at most the endpoint limit per `kavi/endpoint`
tag. Unless a daemon already beats for this DAGSTER_HOME, the command starts a `dagster-daemon` for its own
duration on the batch's own instance (DAGSTER_HOME/batch: the home's storage, the batch's limits and, unless asked
otherwise, the forge's prefork run launcher, kavi_assets/launcher.py) and stops its process group by pid at the end.

The daemon's workspace is the forge without its other sensors (kavi_assets/queue_definitions.py). Each run takes its
proposal's attempt lock itself (resources/attempt_lock.py); the batch's ledger transactions go through one ledger
host (kavi/ledger/host.py), DuckDB's single writer. `kavi forge NAME` stays in process.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kavi.forge.batch import (
    BATCH_TAG,
    ENDPOINT_TAG,
    ROUTING_AS_OF_TAG,
    BatchItem,
    BatchRequest,
    batch_request_path,
    batch_stamp,
    endpoint_tag,
    write_batch_request,
)
from kavi.home import KaviHome
from kavi.settings import (
    ENDPOINT_CONCURRENCY_ENV,
    MAX_CONCURRENT_RUNS_ENV,
    ConfigError,
    concurrency_setting,
)
from kavi_assets.cli.dagster_env import RunOutcome, configure_batch, instance, step_failures

LOCATION_NAME = "kavi_assets.definitions"  # the full location's name (see kavi_assets/queue_definitions.py)
QUEUE_MODULE = "kavi_assets.queue_definitions"
RUN_WAIT_S = 6 * 3600.0
STALL_S = 120.0  # how long a batch may wait for its first run to be queued, or to leave the queue
_POLL_S = 0.5  # each poll reads every pending run's record: a batch of hundreds is polled twice a second
_FINISHED = ("SUCCESS", "FAILURE", "CANCELED")
_LAST_POLL_S = 0.2
LAUNCHERS = ("prefork", "dagster")
BATCH_LAUNCHER_ENV = "KAVI_BATCH_LAUNCHER"


@dataclass(frozen=True)
class QueueSettings:
    max_runs: int
    endpoint_limit: int | None
    launcher: str = "prefork"  # the batch's run launcher: "prefork" (kavi_assets/launcher.py) or "dagster"


def queue_settings(concurrency: int | None, environ: Any = None) -> QueueSettings:
    """`--concurrency N` or KAVI_MAX_CONCURRENT_RUNS (default 2, at most 64); KAVI_ENDPOINT_CONCURRENCY bounds the
    runs per model endpoint (unset: no limit beyond max_concurrent_runs); KAVI_BATCH_LAUNCHER picks the batch's run
    launcher (`prefork`, the default, or `dagster`: Dagster's default launcher)."""
    env = os.environ if environ is None else environ
    if concurrency is not None:
        max_runs = concurrency_setting({MAX_CONCURRENT_RUNS_ENV: str(concurrency)}, MAX_CONCURRENT_RUNS_ENV, 2)
    else:
        max_runs = concurrency_setting(env, MAX_CONCURRENT_RUNS_ENV, 2)
    limit = None
    if str(env.get(ENDPOINT_CONCURRENCY_ENV) or "").strip():
        limit = concurrency_setting(env, ENDPOINT_CONCURRENCY_ENV, max_runs)
    launcher = str(env.get(BATCH_LAUNCHER_ENV) or "prefork").strip().lower()
    if launcher not in LAUNCHERS:
        raise ConfigError(f"{BATCH_LAUNCHER_ENV}={launcher!r}: expected one of {', '.join(LAUNCHERS)}")
    return QueueSettings(max_runs, limit, launcher)


def _reset_signals() -> None:
    # A daemon started from a shell job inherits SIGINT/SIGTERM as ignored (see DAGSTER-NOTES): restore them, so
    # the SIGTERM this module sends stops it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _daemon_running(inst: Any, within_s: float = 30.0) -> bool:
    """True when a daemon of this DAGSTER_HOME dequeues runs (its queued-run heartbeat is recent)."""
    try:
        beats = inst.get_daemon_heartbeats()
    except Exception:  # no heartbeat table yet: no daemon
        return False
    beat = beats.get("QUEUED_RUN_COORDINATOR")
    return beat is not None and time.time() - float(beat.timestamp) < within_s


def _workspace_file(dagster_home: Path) -> Path:
    """The workspace of the daemon a batch starts: the forge's location without its other sensors, under the full
    location's name (the runs read as the forge's in the UI)."""
    path = dagster_home / "kavi-queue-workspace.yaml"
    text = ("# Written by kavi for the daemon `kavi forge --all` starts: the forge with only its batch sensor.\n"
            + yaml.safe_dump({"load_from": [{"python_module": {"module_name": QUEUE_MODULE,
                                                               "location_name": LOCATION_NAME}}]}, sort_keys=False))
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return path


def daemon_command() -> list[str]:
    """Dagster's `dagster-daemon` console script of this environment."""
    beside = Path(sys.executable).with_name("dagster-daemon")
    found = str(beside) if beside.exists() else shutil.which("dagster-daemon")
    if not found:
        raise ConfigError("dagster-daemon is not installed beside this Python: reinstall kavi-forge "
                          "(it depends on dagster)")
    return [found]


@contextmanager
def queue_daemon(dagster_home: Path, settings: QueueSettings, ledger: Path | None = None) -> Iterator[int | None]:
    """A dagster-daemon for the block (yields its pid), or None when one already dequeues for this home; with
    `ledger`, the batch's runs write through one ledger host (kavi/ledger/host.py)."""
    with batch_ledger_host(ledger) as host, _queue_daemon(dagster_home, settings) as pid:
        yield pid
        if host is not None:
            # Every run of the block has ended: the ledger host's shutdown (its last checkpoint) overlaps the
            # daemon's, instead of following it.
            with contextlib.suppress(OSError):
                os.kill(host, signal.SIGTERM)


@contextmanager
def batch_ledger_host(ledger: Path | None) -> Iterator[int | None]:
    """One writer for the batch: the local ledger file served by a host process while the batch runs (not for the
    shared DuckLake ledger, whose writers meet in its catalog). Yields the host's pid, None without one."""
    from kavi.ledger.host import ledger_host
    from kavi.ledger.store import Ledger

    if ledger is None or Ledger(ledger, migrate=False).lake is not None:
        yield None
        return
    with ledger_host(ledger) as pid:
        yield pid


def note_hand_edited(dagster_home: Path) -> None:
    from kavi_assets.cli.console import make_console

    make_console(stderr=True).print(f"note: {dagster_home / 'dagster.yaml'} was edited by hand: its run limits "
                                    "apply, not --concurrency", highlight=False, markup=False)


@contextmanager
def _queue_daemon(dagster_home: Path, settings: QueueSettings) -> Iterator[int | None]:
    inst = instance()
    if _daemon_running(inst):
        yield None
        return
    folder, ours = configure_batch(dagster_home, settings.max_runs, settings.endpoint_limit,
                                   prefork=settings.launcher == "prefork")
    if not ours:
        note_hand_edited(dagster_home)
    logs = dagster_home / "logs"
    logs.mkdir(exist_ok=True)
    with shared_recorded_model() as env:
        env["DAGSTER_HOME"] = str(folder)
        log = (logs / "kavi-queue-daemon.log").open("ab")
        try:
            proc = subprocess.Popen([*daemon_command(), "run", "-w", str(_workspace_file(dagster_home)),
                                     "--log-level", "warning"],
                                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=dagster_home,
                                    start_new_session=True, preexec_fn=_reset_signals, env=env)
        except BaseException:
            log.close()
            raise
        try:
            yield proc.pid
        finally:
            _stop(proc)
            log.close()
            # Its last heartbeat would pass for a live daemon for 30 s, and the next command would wait for it.
            inst.wipe_daemon_heartbeats()


@contextmanager
def shared_recorded_model() -> Iterator[dict[str, str]]:
    """The environment for the daemon (and so every run worker it launches): with no live endpoint configured, one
    recorded-model server on loopback for the whole batch, named in KAVI_RECORDED_BASE_URL and stopped at the end.

    Without it each run worker would start its own server and load every cassette. The workers still label it the
    recorded model (resources/llm.py asks its /health); the replayed latency (KAVI_RECORDED_LATENCY_S) is read
    here, from the same environment the workers get."""
    from kavi.llm.client import settings_from_env
    from kavi.llm.recorded import SHARED_URL_ENV, RecordedModelServer

    env = dict(os.environ)
    if settings_from_env(env) is not None or (env.get(SHARED_URL_ENV) or "").strip():
        yield env  # a live endpoint, or a recorded server someone else runs for us
        return
    server = RecordedModelServer().start()
    try:
        env[SHARED_URL_ENV] = server.base_url
        yield env
    finally:
        server.stop()


def _stop(proc: "subprocess.Popen[bytes]") -> None:
    """SIGTERM to the daemon's process group (its code server, run host and run workers), then SIGKILL."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


class QueueStalled(ConfigError):
    """No daemon took the queued runs (the daemon that seemed to run for this DAGSTER_HOME is gone)."""


def run_outcome(inst: Any, run: Any) -> RunOutcome:
    """A finished run's outcome: its failed steps and the errors that are not a gate's blocking check."""
    import dagster as dg

    failures = inst.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
    failed, errors = step_failures([e.dagster_event for e in failures if e.dagster_event is not None])
    if run.status.value != "SUCCESS" and not failed:
        # The run failed before any step did (launch, worker start, a killed worker): say what Dagster said.
        ends = inst.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
        why = (ends[-1].dagster_event.message if ends and ends[-1].dagster_event else None) or "no step ran"
        errors.append(f"run {run.run_id[:8]} {run.status.value.lower()}: {str(why)[:300]}")
    return RunOutcome(run.run_id, run.status.value == "SUCCESS", failed, errors)


def wait_for_batch(inst: Any, request: BatchRequest, request_path: Path, timeout_s: float = RUN_WAIT_S,
                   on_done: Any = None, stall_s: float = STALL_S, own_daemon: bool = True) -> dict[str, RunOutcome]:
    """Poll the run storage until the batch's runs (run tag kavi/batch) have all finished; `on_done(name, outcome)`
    as each one does. The request file goes once every run exists. QueueStalled when the runs are not queued within
    `stall_s`, or (with someone else's daemon) none of them has left the queue by then."""
    import dagster as dg

    names = {it.name for it in request.items}
    run_of: dict[str, str] = {}
    done: dict[str, RunOutcome] = {}
    deadline = time.monotonic() + timeout_s
    progress = time.monotonic()  # the last time a run was queued, left the queue or finished
    left_queue: set[str] = set()
    while len(done) < len(names):
        before = (len(run_of), len(left_queue), len(done))
        for record in inst.get_run_records(filters=dg.RunsFilter(tags={BATCH_TAG: request.batch_id})):
            run = record.dagster_run
            name = run.tags.get("dagster/partition")
            if name not in names or run_of.setdefault(name, run.run_id) != run.run_id:
                continue
            if run.status.value != "QUEUED":
                left_queue.add(name)
            if name in done or run.status.value not in _FINISHED:
                continue
            done[name] = run_outcome(inst, run)
            if on_done is not None:
                on_done(name, done[name])
        if len(run_of) == len(names):
            with contextlib.suppress(OSError):
                request_path.unlink()  # every run exists: the sensor has nothing left to queue for this batch
        if len(done) == len(names):
            break
        now = time.monotonic()
        if (len(run_of), len(left_queue), len(done)) != before:
            progress = now
        # Stalled: runs still to be queued and none queued for `stall_s`; or, with someone else's daemon, none of
        # the runs has left the queue by then (with our own daemon a full queue may wait longer).
        waiting_for_sensor = len(run_of) < len(names)
        if now - progress > stall_s and (waiting_for_sensor or (not own_daemon and not left_queue)):
            where = os.environ.get("DAGSTER_HOME", "")
            what = (f"the batch sensor queued {len(run_of)} of {len(names)} run(s)" if waiting_for_sensor
                    else f"no daemon took the {len(names)} queued run(s)")
            raise QueueStalled(f"{what} within {stall_s:.0f}s: is the dagster-daemon of DAGSTER_HOME={where} "
                               "running, with the batch_requests sensor on? Its log: "
                               f"{Path(where) / 'logs' / 'kavi-queue-daemon.log'} (the batch was cancelled)")
        if now > deadline:
            raise TimeoutError(f"{len(names) - len(done)} queued run(s) did not finish within {timeout_s:.0f}s")
        # The last runs of a batch are polled more often: the command ends sooner after them.
        time.sleep(_POLL_S if len(names) - len(done) > 16 else _LAST_POLL_S)
    return done


@dataclass
class QueuedForge:
    name: str
    tags: dict[str, str]
    run_key: str | None = None


def forge_queued(h: KaviHome, items: Sequence[QueuedForge], settings: QueueSettings,
                 on_done: Any = None, start_daemon: bool = True) -> list[dict[str, Any]]:
    """Forge every item through the Dagster queue, at most `settings.max_runs` at once; the outcomes in the items'
    order, each as `kavi forge --json` gives it. Without `start_daemon` the caller runs queue_daemon around it."""
    from kavi.settings import validate_config
    from kavi_assets.cli.dagster_env import add_partitions, ensure_dagster_home, sweep_before_launch
    from kavi_assets.cli.forge_run import forge_outcome
    from kavi_assets.cli.home_option import open_records

    validate_config()
    names = [it.name for it in items]
    if len(set(names)) != len(names):
        raise ConfigError("a proposal can be queued once per batch (one attempt at a time)")
    dagster_home = ensure_dagster_home(h)
    os.environ["KAVI_HOME"] = str(h.root)  # the daemon's code server and run workers take the home from it
    records = open_records(h)
    known = {row["name"] for row in records.list_status()}  # one read, not one per proposal
    for name in names:
        if name not in known:
            records.require_proposal(name)  # says which proposal is missing, as `kavi forge NAME` does
    sweep_before_launch(h)
    # The batch's runs route on the outcomes recorded before it: its verdicts do not depend on finishing order.
    batch = {ENDPOINT_TAG: endpoint_tag(), ROUTING_AS_OF_TAG: batch_stamp()}
    # The daemon (and its code server) start first: their imports overlap the partitions this process adds.
    with queue_daemon(dagster_home, settings, h.ledger_path) if start_daemon else nullcontext(0) as pid:
        add_partitions(names)
        request = write_batch_request(h.batches_dir, [BatchItem(it.name, {**batch, **it.tags}, it.run_key)
                                                      for it in items])
        path = batch_request_path(h.batches_dir, request.batch_id)
        outs: dict[str, dict[str, Any]] = {}

        def done(name: str, outcome: RunOutcome) -> None:
            if on_done is not None:
                on_done(name, outcome)
            # Read as each run ends, while the batch's ledger host serves the file (the command ends sooner after
            # its last run); one that cannot be read now is read, and says why, at the end.
            with contextlib.suppress(Exception):
                outs[name] = forge_outcome(h, records, name, outcome, refresh_registry=False)

        try:
            finished = wait_for_batch(instance(), request, path, on_done=done, own_daemon=pid is not None)
        except BaseException:
            _cancel_batch(request.batch_id, path)  # interrupted: what has not started does not start later, unasked
            raise
        for name, run in finished.items():
            if name not in outs:
                outs[name] = forge_outcome(h, records, name, run, refresh_registry=False)
        if any(o["status"] == "TRUSTED" for o in outs.values()):
            # Once for the batch: the registry file is current when the command returns.
            from kavi.promotion.registry import refresh_registry_file

            refresh_registry_file(records, h.registry_path)
    return [outs[n] for n in names]


def _cancel_batch(batch_id: str, request_path: Path) -> None:
    import dagster as dg

    with contextlib.suppress(OSError):
        request_path.unlink()
    inst = instance()
    for record in inst.get_run_records(filters=dg.RunsFilter(tags={BATCH_TAG: batch_id})):
        if record.dagster_run.status.value == "QUEUED":
            inst.run_coordinator.cancel_run(record.dagster_run.run_id)


def forgeable(h: KaviHome) -> list[str]:
    """Proposals `kavi forge --all` takes: PROPOSED, or FAILED with an attempt still to make (not TRUSTED,
    VERIFIED awaiting approval, ESCALATED, GATE_VIOLATION or REVOKED)."""
    from kavi_assets.cli.home_option import open_records

    return [r["name"] for r in open_records(h).list_status() if r["status"] in ("PROPOSED", "FAILED")]
