"""Many forge runs at once on one machine, through Dagster's own queue.

`kavi forge --all` and `kavi demo --concurrency N` create their runs in DAGSTER_HOME and submit them to the
QueuedRunCoordinator, which holds them QUEUED. Something must dequeue them: a `dagster-daemon` this command starts
for its own duration (its process group is stopped by pid when the command ends), unless a daemon already beats
for this DAGSTER_HOME. The daemon's queued-run coordinator launches each run when a slot is free — at most
`max_concurrent_runs` at once and at most the endpoint limit per `kavi/endpoint` tag, so a provider's rate limit
holds — through the run launcher of dagster.yaml (kavi_assets/launcher), which forks each run's worker from a host
that has imported the forge once.

Why the daemon and not threads in this process: the queue, its limits, run monitoring and the UI's view of queued
runs are Dagster's and already configured in dagster.yaml; a run in its own process also keeps one run's crash or
memory from another's. The price is a process per run (a fork of the run host) and the daemon's start (a few
seconds): `kavi forge NAME` stays in process, as before.

The daemon loads no code location (see _workspace_file) and runs no sensor or schedule, so it executes the runs
queued and nothing else; the runs' origin is kavi_assets.queue_definitions (the forge without sensors). Each run
takes its proposal's attempt lock itself (resources/attempt_lock.py); the batch's ledger transactions go through one
ledger host (kavi/ledger/host.py), DuckDB's single writer.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kavi.forge.batch import ENDPOINT_TAG, ROUTING_AS_OF_TAG, batch_stamp, endpoint_tag
from kavi.home import KaviHome
from kavi.process_env import export
from kavi.settings import (
    ENDPOINT_CONCURRENCY_ENV,
    MAX_CONCURRENT_RUNS_ENV,
    ConfigError,
    child_environment,
    concurrency_setting,
    configured_variables,
    read_setting,
)
from kavi_assets.cli.dagster_env import RunOutcome, configure_queue, instance, step_failures
from kavi_assets.launcher.host import HANDED_OPTION, PRESTART_OPTION

LOCATION_NAME = "kavi_assets.definitions"  # the full location's name (see kavi_assets/queue_definitions.py)
QUEUE_MODULE = "kavi_assets.queue_definitions"
DAEMON_START_S = 120.0
RUN_WAIT_S = 6 * 3600.0
STALL_S = 120.0  # with someone else's daemon: how long the batch may sit in the queue untouched
_POLL_S = 0.5  # each poll reads every pending run's record: a batch of hundreds is polled twice a second
_FINISHED = ("SUCCESS", "FAILURE", "CANCELED")
_LAST_POLL_S = 0.2


@dataclass(frozen=True)
class QueueSettings:
    max_runs: int
    endpoint_limit: int | None


def queue_settings(concurrency: int | None, environ: Mapping[str, str] | None = None) -> QueueSettings:
    """`--concurrency N` or KAVI_MAX_CONCURRENT_RUNS (default 2, at most 64); KAVI_ENDPOINT_CONCURRENCY bounds the
    runs per model endpoint (unset: no limit beyond max_concurrent_runs). `environ`: a mapping of variables to read
    instead of the settings of the process environment."""
    if concurrency is not None:
        max_runs = concurrency_setting({MAX_CONCURRENT_RUNS_ENV: str(concurrency)}, MAX_CONCURRENT_RUNS_ENV, 2)
    elif environ is None:
        max_runs = read_setting("max_concurrent_runs")
    else:
        max_runs = concurrency_setting(environ, MAX_CONCURRENT_RUNS_ENV, 2)
    limit = None
    if environ is None:
        if ENDPOINT_CONCURRENCY_ENV in configured_variables():
            limit = read_setting("endpoint_concurrency")
    elif str(environ.get(ENDPOINT_CONCURRENCY_ENV) or "").strip():
        limit = concurrency_setting(environ, ENDPOINT_CONCURRENCY_ENV, max_runs)
    return QueueSettings(max_runs, limit)


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
    """The workspace of the daemon a batch starts: no code location. Its queue launches every run of the batch
    through the run launcher of dagster.yaml (kavi_assets/launcher), which forks the run worker from its run host, or
    starts `dagster api execute_run` itself, and never asks a code server; the daemon runs no sensor or schedule. A
    code server would only import the forge once more while the batch starts, and delay the first run (README,
    "Forging many at once")."""
    path = dagster_home / "kavi-queue-workspace.yaml"
    text = ("# Written by kavi for the daemon `kavi forge --all` starts: no code location, as its run launcher needs\n"
            "# none (kavi_assets/launcher/prefork.py).\nload_from: []\n")
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return path


@contextmanager
def queue_daemon(dagster_home: Path, ledger: Path | None = None, home: Path | None = None) -> Iterator[int | None]:
    """A dagster-daemon for the block (yields its pid), or None when one already dequeues for this home; with
    `ledger`, the batch's runs write through one ledger host (kavi/ledger/host.py); with `home`, its runs use that
    skills home (else KAVI_HOME's)."""
    with batch_ledger_host(ledger) as host, _queue_daemon(dagster_home, home) as pid:
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


@contextmanager
def _queue_daemon(dagster_home: Path, home: Path | None) -> Iterator[int | None]:
    inst = instance()
    if _daemon_running(inst):
        yield None
        return
    logs = dagster_home / "logs"
    logs.mkdir(exist_ok=True)
    # The daemon and every run worker it launches: the instance of this DAGSTER_HOME, the runs in this skills home.
    homes = {"DAGSTER_HOME": str(dagster_home), **({"KAVI_HOME": str(home)} if home is not None else {})}
    with shared_recorded_model(homes) as env:
        log = (logs / "kavi-queue-daemon.log").open("ab")
        host, handed, handover = _start_run_host(env, dagster_home, log)
        # This daemon launches a batch now: its run host imports while the daemon starts, or is the one just started.
        batch = [PRESTART_OPTION, *([HANDED_OPTION, handover] if handover else [])]
        try:
            # Dagster's dagster-daemon command, with a quicker exit (kavi_assets/launcher/daemon.py).
            proc = subprocess.Popen([sys.executable, "-m", "kavi_assets.launcher.daemon", *batch, "run", "-w",
                                     str(_workspace_file(dagster_home)), "--log-level", "warning"],
                                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=dagster_home,
                                    start_new_session=True, preexec_fn=_reset_signals, env=env, pass_fds=handed)
        except BaseException:
            if host is not None:
                _stop(host)
            log.close()
            raise
        finally:
            for fd in handed:
                os.close(fd)  # the daemon holds it now: when the daemon ends, the host's socket closes
        try:
            yield proc.pid
        finally:
            _stop(proc)
            if host is not None:
                _stop(host)  # it ended with the daemon's end of its socket; its group (any run still alive) too
            log.close()
            # Its last heartbeat would pass for a live daemon for 30 s, and the next command would wait for it.
            inst.wipe_daemon_heartbeats()


def _start_run_host(env: Mapping[str, str], dagster_home: Path, log: Any
                    ) -> tuple["subprocess.Popen[bytes] | None", tuple[int, ...], str]:
    """The run host the daemon's launcher would start (kavi_assets/launcher/host.py), started now, before the
    daemon: its imports (Dagster, the forge) overlap the daemon's instead of following them, and the batch's first
    runs start that much sooner. Its socket's other end goes to the daemon (pass_fds, named by the returned handover
    "FD:HOST_PID:PARENT_PID" on the daemon's command line), whose launcher takes it as its host. Started in a
    session of its own (the runs it forks join it); stopped with the daemon. Where it cannot start, the daemon's
    launcher starts one itself, as without this."""
    import socket

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        host = subprocess.Popen([sys.executable, "-m", "kavi_assets.launcher", "--fd", str(theirs.fileno())],
                                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, cwd=dagster_home, start_new_session=True, env=env)
    except OSError:
        ours.close()
        return None, (), ""
    finally:
        theirs.close()
    fd = ours.detach()
    return host, (fd,), f"{fd}:{host.pid}:{os.getpid()}"


@contextmanager
def shared_recorded_model(overrides: Mapping[str, str] | None = None) -> Iterator[dict[str, str]]:
    """The environment for the daemon (and so every run worker it launches): with no live endpoint configured, one
    recorded-model server on loopback for the whole batch, named in KAVI_RECORDED_BASE_URL and stopped at the end.

    Without it each run worker starts its own server and loads every cassette, most of what a queued run cost
    beyond a run in process. The workers still label it the recorded model (resources/llm.py asks its /health);
    the replayed latency (KAVI_RECORDED_LATENCY_S) is read here, from the same environment the workers get.
    `overrides`: variables the daemon gets besides this process's."""
    from kavi.llm.client import settings_from_env
    from kavi.llm.recorded import SHARED_URL_ENV, RecordedModelServer

    env = child_environment(overrides)
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
    """SIGTERM to the daemon's process group (it started its code server and run workers in it), then SIGKILL."""
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


class RunSubmitter:
    """Creates forge runs for the queue from this process: the location is loaded in process under the forge's
    location name (the name a `dagster dev` workspace gives it), its runs' origin the queue module."""

    def __init__(self) -> None:
        from dagster._core.remote_origin import InProcessCodeLocationOrigin
        from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
        from dagster._core.workspace.context import WorkspaceProcessContext
        from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget

        self.instance = instance()
        origin = InProcessCodeLocationOrigin(
            loadable_target_origin=LoadableTargetOrigin(executable_path=sys.executable, module_name=QUEUE_MODULE),
            location_name=LOCATION_NAME)
        self._process = WorkspaceProcessContext(self.instance, InProcessWorkspaceLoadTarget(origin))
        self.workspace = self._process.create_request_context()
        self.location = self.workspace.get_code_location(LOCATION_NAME)
        self.repo = next(iter(self.location.get_repositories().values()))
        self._plans: dict[tuple[str, str], Any] = {}

    def close(self) -> None:
        self._process.__exit__(None, None, None)

    def submit(self, job_name: str, partition_key: str | None, tags: dict[str, str]) -> str:
        from dagster._core.definitions.selector import JobSubsetSelector

        remote_job = self.location.get_job(JobSubsetSelector(location_name=LOCATION_NAME,
                                                             repository_name=self.repo.name, job_name=job_name,
                                                             op_selection=None))
        all_tags = {**remote_job.tags, **tags}
        if partition_key is not None:
            all_tags["dagster/partition"] = partition_key
        run_config = {"loggers": {"console": {"config": {"log_level": read_setting("dagster_log")}}}}
        # One plan per job: the forge job's plan does not depend on the partition (a batch of 50 built it 50 times).
        key = (job_name, json.dumps(run_config, sort_keys=True))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self.location.get_execution_plan(
                remote_job, run_config, step_keys_to_execute=None, known_state=None, instance=self.instance)
        run = self.instance.create_run(
            job_name=job_name, run_id=None, run_config=run_config, status=None, tags=all_tags, root_run_id=None,
            parent_run_id=None, step_keys_to_execute=plan.execution_plan_snapshot.step_keys_to_execute,
            execution_plan_snapshot=plan.execution_plan_snapshot, job_snapshot=remote_job.job_snapshot,
            parent_job_snapshot=remote_job.parent_job_snapshot, asset_selection=None, asset_check_selection=None,
            resolved_op_selection=None, op_selection=None, remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=remote_job.get_python_origin(), asset_graph=self.repo.asset_graph)
        self.instance.submit_run(run.run_id, self.workspace)
        return str(run.run_id)


class QueueStalled(ConfigError):
    """No daemon took the queued runs (the daemon that seemed to run for this DAGSTER_HOME is gone)."""


def wait_for_runs(inst: Any, run_ids: Sequence[str], timeout_s: float = RUN_WAIT_S, on_done: Any = None,
                  stall_s: float | None = None) -> dict[str, RunOutcome]:
    """Poll the run storage until every run finished; `on_done(run_id, outcome)` as each one does. With `stall_s`,
    give up (QueueStalled) when none of the runs has left the queue by then."""
    import dagster as dg

    pending = set(run_ids)
    done: dict[str, RunOutcome] = {}
    started = time.monotonic()
    deadline = started + timeout_s
    moved = False
    while pending:
        for record in inst.get_run_records(filters=dg.RunsFilter(run_ids=list(pending))):
            run = record.dagster_run
            moved = moved or run.status.value != "QUEUED"
            if run.status.value not in _FINISHED:
                continue
            failures = inst.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
            failed, errors = step_failures([e.dagster_event for e in failures if e.dagster_event is not None])
            if run.status.value != "SUCCESS" and not failed:
                # The run failed before any step did (launch, worker start, a killed worker): say what Dagster said.
                ends = inst.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
                why = (ends[-1].dagster_event.message if ends and ends[-1].dagster_event else None) or "no step ran"
                errors.append(f"run {run.run_id[:8]} {run.status.value.lower()}: {str(why)[:300]}")
            done[run.run_id] = RunOutcome(run.run_id, run.status.value == "SUCCESS", failed, errors)
            pending.discard(run.run_id)
            if on_done is not None:
                on_done(run.run_id, done[run.run_id])
        if pending:
            if stall_s is not None and not moved and time.monotonic() - started > stall_s:
                raise QueueStalled(f"no daemon took the {len(pending)} queued run(s) within {stall_s:.0f}s: is the "
                                   f"dagster-daemon of DAGSTER_HOME={read_setting('dagster_home')} running? "
                                   "(the runs were cancelled)")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(pending)} queued run(s) did not finish within {timeout_s:.0f}s")
            # The last runs of a batch are polled more often: the command ends sooner after them.
            time.sleep(_POLL_S if len(pending) > 16 else _LAST_POLL_S)
    return done


@dataclass
class QueuedForge:
    name: str
    tags: dict[str, str]


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
    # The definitions this process submits the runs of bind KAVI_HOME, as the run workers' do.
    export({"KAVI_HOME": str(h.root)})
    if not configure_queue(dagster_home, settings.max_runs, settings.endpoint_limit):
        from kavi_assets.cli.console import make_console

        make_console(stderr=True).print(f"note: {dagster_home / 'dagster.yaml'} was edited by hand: its run "
                                        "limits apply, not --concurrency", highlight=False, markup=False)
    records = open_records(h)
    known = {row["name"] for row in records.list_status()}  # one read, not one per proposal
    for name in names:
        if name not in known:
            records.require_proposal(name)  # says which proposal is missing, as `kavi forge NAME` does
    sweep_before_launch(h)
    # The batch's runs route on the outcomes recorded before it: its verdicts do not depend on finishing order.
    batch = {ENDPOINT_TAG: endpoint_tag(), ROUTING_AS_OF_TAG: batch_stamp()}
    by_run: dict[str, str] = {}
    # The daemon (and its code server and run host) start first: their imports overlap the partitions and runs
    # this process creates.
    with queue_daemon(dagster_home, h.ledger_path, h.root) if start_daemon else nullcontext(0) as pid:
        try:
            add_partitions(names)
            submitter = RunSubmitter()
            try:
                for it in items:
                    run_id = submitter.submit("forge", it.name, {**batch, **it.tags})
                    by_run[run_id] = it.name
            finally:
                submitter.close()
            outs: dict[str, dict[str, Any]] = {}

            def done(run_id: str, outcome: RunOutcome) -> None:
                if on_done is not None:
                    on_done(run_id, outcome)
                # Read as each run ends, while the batch's ledger host serves the file (the command ends sooner
                # after its last run); one that cannot be read now is read, and says why, at the end.
                with contextlib.suppress(Exception):
                    outs[by_run[run_id]] = forge_outcome(h, records, by_run[run_id], outcome, refresh_registry=False)

            finished = wait_for_runs(instance(), list(by_run), on_done=done,
                                     stall_s=STALL_S if pid is None else None)
        except BaseException:
            _cancel_queued(list(by_run))  # interrupted: what has not started does not start later, unasked
            raise
        for rid, run in finished.items():
            if by_run[rid] not in outs:
                outs[by_run[rid]] = forge_outcome(h, records, by_run[rid], run, refresh_registry=False)
        if any(o["status"] == "TRUSTED" for o in outs.values()):
            # Once for the batch: the registry file is current when the command returns.
            from kavi.promotion.registry import refresh_registry_file

            refresh_registry_file(records, h.registry_path)
    return [outs[n] for n in names]


def _cancel_queued(run_ids: Sequence[str]) -> None:
    import dagster as dg

    inst = instance()
    for record in inst.get_run_records(filters=dg.RunsFilter(run_ids=list(run_ids))):
        if record.dagster_run.status.value == "QUEUED":
            inst.run_coordinator.cancel_run(record.dagster_run.run_id)


def forgeable(h: KaviHome) -> list[str]:
    """Proposals `kavi forge --all` takes: PROPOSED, or FAILED with an attempt still to make (not TRUSTED,
    VERIFIED awaiting approval, ESCALATED, GATE_VIOLATION or REVOKED)."""
    from kavi_assets.cli.home_option import open_records

    return [r["name"] for r in open_records(h).list_status() if r["status"] in ("PROPOSED", "FAILED")]
