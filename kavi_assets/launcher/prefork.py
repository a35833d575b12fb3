"""PreforkRunLauncher: Dagster's run launcher for the forge's own code location, forking each run worker from a
host that has already imported Dagster and the forge (kavi_assets/launcher/host.py).

dagster.yaml names it (`run_launcher: module: kavi_assets.launcher, class: PreforkRunLauncher`); the queued-run
coordinator, its limits, run monitoring and the UI work as with Dagster's default launcher. What changes is only how
a run worker starts: the default launcher asks the location's code server, which spawns a fresh interpreter per run
(import dagster, openai, DuckDB, the forge, load the definitions); this one asks its host for a fork. The worker then
runs Dagster's own run-worker entry point (`dagster api execute_run`), so the run's events, its steps and its end are
Dagster's.

- Only runs of the forge's location (`kavi_assets.definitions`, `kavi_assets.queue_definitions`) on this Python are
  forked. A run of the forge's location that cannot be forked (another Python, or no host) gets the worker Dagster's
  code server would start for it, started here: a fresh `dagster api execute_run` process of the run's own
  interpreter, so the forge's runs never need a code server (the daemon `kavi forge --all` starts loads none). Any
  other run goes to Dagster's default launcher, unchanged.
- The host starts on the first run (or, for a batch's daemon, is handed over ready by `kavi forge --all`: hand_over)
  and again whenever the forge's source changed since it started (a code reload in the UI, an upgrade), so a run
  never executes stale code. Where the host cannot start, the run gets a fresh worker process and the daemon's log
  says why.
- Each run is tagged with its worker's pid, host and start time (the tags of kavi/process_owner.py): the run
  monitor's worker health check and `terminate` (SIGTERM, which Dagster turns into a cancellation) use them, as do
  `kavi doctor` and the stale-run sweep.

The run launcher interface is Dagster's extension point for this (dagster-docker and dagster-k8s implement it); its
base classes live in Dagster's private modules, as theirs do.
"""

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dagster import DagsterRun, DefaultRunLauncher, serialize_value
from dagster._core.launcher.base import CheckRunHealthResult, LaunchRunContext, RunLauncher, WorkerStatus
from dagster._serdes import ConfigurableClass
from dagster._serdes.config_class import ConfigurableClassData

from kavi.process_owner import ProcessOwner, hostname, process_start
from kavi_assets.launcher.host import LOCATION_MODULES, code_stamp
from kavi_assets.launcher.wake import RUN_ENDS

WORKER_TAG = "kavi/run_worker"  # "prefork": forked from the run host; "process": a fresh interpreter (spawn_worker)
WORKER_KINDS = ("prefork", "process")
START_TIMEOUT_S = 120.0
_log = logging.getLogger("kavi.launcher")


def _same_python(a: str, b: str) -> bool:
    """The same interpreter of the same environment (`python` and `python3.11` of one virtual environment are)."""
    if a == b:
        return True
    try:
        return os.path.dirname(a) == os.path.dirname(b) and os.path.samefile(a, b)
    except OSError:
        return False


def spawn_worker(input_json: str, executable: str) -> int:
    """A run worker in a fresh interpreter: `dagster api execute_run INPUT_JSON`, the command a location's code server
    starts for Dagster's default launcher, here without the code server. In a session of its own, as a forked worker
    is; a thread of this process reaps it when it ends."""
    proc = subprocess.Popen([executable, "-m", "dagster", "api", "execute_run", input_json],
                            stdin=subprocess.DEVNULL, start_new_session=True)
    threading.Thread(target=proc.wait, name=f"kavi-run-worker-{proc.pid}", daemon=True).start()
    return proc.pid


@dataclass
class BatchHandover:
    """What the daemon a batch starts was given on its command line (kavi_assets/launcher/daemon.py): a run host
    ready for its launcher (`handed`, "FD:HOST_PID:PARENT_PID", taken once) and whether to start one at once."""

    handed: str = ""
    prestart: bool = False


BATCH = BatchHandover()  # this process's; empty but in a batch's daemon


def hand_over(handed: str, prestart: bool) -> None:
    """Give this process's launcher the batch's run host (see BatchHandover)."""
    BATCH.handed, BATCH.prestart = handed, prestart


class HostUnavailable(RuntimeError):
    """The run host could not start or stopped answering."""


def handed_host(raw: str | None = None) -> tuple[socket.socket, int] | None:
    """The socket and pid of the host `raw` names ("FD:HOST_PID:PARENT_PID"; None: the one handed to this process,
    taken once); None when there is none for this process."""
    if raw is None:
        raw, BATCH.handed = BATCH.handed, ""
    try:
        fd, pid, parent = (int(part) for part in raw.split(":"))
    except ValueError:
        return None
    if parent != os.getppid():  # inherited by someone else (e.g. the daemon's code server): not theirs
        return None
    try:
        sock = socket.socket(fileno=fd)
    except (OSError, ValueError):  # not open, not a socket, not a descriptor
        return None
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_SEQPACKET:
        sock.detach()  # not the host's socket: leave the descriptor alone
        return None
    return sock, pid


class RunHost:
    """A client of one host process (thread-safe: one request at a time over its socket): one this launcher
    starts, or one handed over ready (`handed`: its socket and pid; the process that started it reaps it)."""

    def __init__(self, handed: tuple[socket.socket, int] | None = None) -> None:
        self._lock = threading.Lock()
        self._answering = True  # False once a request found it gone (a handed host's exit leaves no exit status)
        self.proc: subprocess.Popen[bytes] | None = None
        if handed is not None:
            self._sock, self.pid = handed
        else:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self._sock = ours
            # Not a new session: the host and its runs stay in the daemon's process group, so stopping the
            # daemon's group (as `kavi forge --all` does at its end) stops them too.
            self.proc = subprocess.Popen([sys.executable, "-m", "kavi_assets.launcher", "--fd",
                                          str(theirs.fileno())], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
            self.pid = self.proc.pid
            theirs.close()
        self._sock.settimeout(START_TIMEOUT_S)
        try:
            hello = json.loads(self._sock.recv(1 << 20) or b"{}")
        except (OSError, ValueError) as err:
            self.close()
            raise HostUnavailable(f"the run host did not start: {err}") from None
        if not hello.get("ready"):
            self.close()
            raise HostUnavailable("the run host did not start (it exited before its imports were done)")
        self._sock.settimeout(30.0)
        self.stamp = str(hello.get("stamp", ""))
        self.failed: list[str] = list(hello.get("failed", []))
        if int(hello.get("threads", 1)) > 1:
            _log.warning("the run host holds %s threads after its imports: forks copy only the calling thread",
                         hello.get("threads"))

    @property
    def alive(self) -> bool:
        if not self._answering:
            return False
        if self.proc is not None:
            return self.proc.poll() is None
        try:
            os.kill(self.pid, 0)
        except OSError:
            return False
        return True

    def fork(self, input_json: str) -> int:
        with self._lock:
            try:
                self._sock.send(json.dumps({"input_json": input_json}).encode())
                reply = json.loads(self._sock.recv(1 << 20) or b"{}")
            except (OSError, ValueError) as err:
                self._answering = False  # replaced at the next launch
                raise HostUnavailable(f"the run host did not answer: {err}") from None
        if "pid" not in reply:
            raise HostUnavailable(f"the run host could not fork a run worker: {reply.get('error', 'no answer')}")
        return int(reply["pid"])

    def close(self) -> None:
        """Close the socket: the host exits (runs it forked carry on); reap it (if this process started it)."""
        try:
            self._sock.close()
        finally:
            if self.proc is not None:
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()


class PreforkRunLauncher(RunLauncher, ConfigurableClass):
    """Runs of the forge's location forked from a preloaded run host; anything else through DefaultRunLauncher."""

    def __init__(self, inst_data: ConfigurableClassData | None = None) -> None:
        self._inst_data = inst_data
        self._fallback = DefaultRunLauncher()
        self._host: RunHost | None = None
        self._host_lock = threading.Lock()
        super().__init__()  # type: ignore[no-untyped-call]

    @property
    def inst_data(self) -> ConfigurableClassData | None:
        return self._inst_data

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]
                          ) -> "PreforkRunLauncher":
        return cls(inst_data=inst_data)

    def register_instance(self, instance: Any) -> None:
        super().register_instance(instance)
        self._fallback.register_instance(instance)
        if BATCH.prestart:
            threading.Thread(target=self._prestart, name="kavi-run-host-prestart", daemon=True).start()

    def _prestart(self) -> None:
        try:
            self._running_host()
        except HostUnavailable as err:
            _log.warning("%s (the first run will try again)", err)

    # -- which runs are ours

    @staticmethod
    def ours(run: DagsterRun) -> bool:
        """True for a run of the forge's location (whatever Python it names)."""
        origin = run.job_code_origin
        if origin is None:
            return False
        return getattr(origin.repository_origin.code_pointer, "module", None) in LOCATION_MODULES

    @classmethod
    def forks(cls, run: DagsterRun) -> bool:
        """True for a run of the forge's location that this Python can execute."""
        origin = run.job_code_origin
        return cls.ours(run) and origin is not None and _same_python(origin.executable_path, sys.executable)

    def _running_host(self) -> RunHost:
        with self._host_lock:
            host = self._host
            if host is not None and host.alive and host.stamp == code_stamp():
                return host
            if host is not None:
                host.close()  # stale or dead: its runs carry on; the next ones start from the new code
                self._host = None
            self._host = self._handed_or_new()
            if self._host.failed:
                _log.warning("the run host could not import %s (runs import them themselves)",
                             ", ".join(self._host.failed[:5]))
            return self._host

    @staticmethod
    def _handed_or_new() -> RunHost:
        handed = handed_host()
        if handed is not None:
            try:
                host = RunHost(handed)
            except HostUnavailable as err:
                _log.warning("%s; starting one here", err)
            else:
                if host.stamp == code_stamp():
                    return host
                host.close()  # the forge's source changed since the command started it: a host of this code
        return RunHost()

    # -- the launcher interface

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        origin = run.job_code_origin
        if origin is None or not self.ours(run):
            self._fallback.launch_run(context)
            return
        from dagster._grpc.types import ExecuteRunArgs

        args = ExecuteRunArgs(job_origin=origin, run_id=run.run_id, instance_ref=self._instance.get_ref(),
                              set_exit_code_on_failure=True)
        input_json = serialize_value(args)
        kind = "prefork"
        try:
            if not self.forks(run):
                raise HostUnavailable(f"the run names another Python ({origin.executable_path})")
            pid = self._running_host().fork(input_json)
        except HostUnavailable as err:  # a dead host is replaced at the next launch (_running_host)
            _log.warning("%s; run %s gets a fresh run worker process", err, run.run_id)
            pid, kind = spawn_worker(input_json, origin.executable_path), "process"
        RUN_ENDS.watch(pid)  # its end wakes the run queue of the daemon `kavi forge --all` starts (wake.py)
        owner = ProcessOwner(pid, hostname(), process_start(pid))
        self._instance.add_run_tags(run.run_id, {**owner.tags(), WORKER_TAG: kind})

    def _owner(self, run: DagsterRun) -> ProcessOwner | None:
        if run.tags.get(WORKER_TAG) not in WORKER_KINDS:
            return None
        return ProcessOwner.from_tags(run.tags)

    def terminate(self, run_id: str) -> bool:
        run = self._instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            return False
        owner = self._owner(run)
        if owner is None:
            return bool(self._fallback.terminate(run_id))  # type: ignore[no-untyped-call]
        if owner.alive() is not True:
            return False
        self._instance.report_run_canceling(run)
        try:
            os.kill(owner.pid, signal.SIGTERM)  # Dagster's run worker turns it into an interruption: CANCELED
        except ProcessLookupError:
            return False
        return True

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        owner = self._owner(run)
        if owner is None:
            return CheckRunHealthResult(WorkerStatus.UNKNOWN, "not a forked run worker")
        alive = owner.alive()
        if alive is None:
            return CheckRunHealthResult(WorkerStatus.UNKNOWN, f"the run worker ran on {owner.host}")
        if alive:
            return CheckRunHealthResult(WorkerStatus.RUNNING, run_worker_id=str(owner.pid))
        latest = self._instance.get_run_by_id(run.run_id)
        if latest is not None and latest.is_finished:
            return CheckRunHealthResult(WorkerStatus.SUCCESS, run_worker_id=str(owner.pid))
        return CheckRunHealthResult(WorkerStatus.FAILED, f"the run worker ({owner.describe()}) exited before the "
                                    "run ended", run_worker_id=str(owner.pid))

    def dispose(self) -> None:
        with self._host_lock:
            if self._host is not None:
                self._host.close()
                self._host = None
        self._fallback.dispose()
