"""An opt-in Dagster run launcher for batches: each run worker of the forge's location is forked from a host process
that imported Dagster and the forge once, instead of a fresh interpreter per run.

Only the dagster.yaml of a batch's own instance names it (`kavi forge --all --launcher prefork`, see
kavi_assets/cli/parallel.py); the home's dagster.yaml uses Dagster's default launcher. The queue, its limits, run
monitoring and the UI are Dagster's; a forked worker runs Dagster's own run-worker command (`dagster api
execute_run`), so the run's events, steps and end are Dagster's. A run of another location, or of another Python,
goes to Dagster's default launcher. The launcher interface itself has no public import in Dagster: its base classes
are imported from Dagster's modules here, and only here.

Host protocol, over a SOCK_SEQPACKET socket passed as `--fd`: the host sends `{"ready": true, "stamp": ...}` once
its imports are done; each request `{"input_json": ...}` is answered `{"pid": N}` or `{"error": "..."}`. The host
holds no connection, reaps its children and exits when the launcher's end of the socket closes.
"""

import argparse
import gc
import importlib
import json
import logging
import os
import pkgutil
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from typing import Any

from dagster import DagsterRun, DefaultRunLauncher, serialize_value
from dagster._core.launcher.base import CheckRunHealthResult, LaunchRunContext, RunLauncher, WorkerStatus
from dagster._grpc.types import ExecuteRunArgs
from dagster._serdes import ConfigurableClass, ConfigurableClassData

from kavi.process_owner import ProcessOwner, hostname, process_start

WORKER_TAG = "kavi/run_worker"  # "prefork": forked from the run host; "process": a fresh interpreter
WORKER_KINDS = ("prefork", "process")
START_TIMEOUT_S = 120.0
LOCATION_MODULES = ("kavi_assets.definitions", "kavi_assets.queue_definitions")
# Imported once in the host besides the forge's own modules: what forked runs still imported on their own.
RUN_MODULES = (
    "dagster", "dagster._cli.api", "dagster._core.storage.runs.sqlite.sqlite_run_storage",
    "dagster._core.storage.event_log.sqlite.sqlite_event_log",
    "dagster._core.storage.schedules.sqlite.sqlite_schedule_storage", "dagster._core.storage.local_compute_log_manager",
    "dagster._core.execution.api", "dagster._core.execution.plan.execute_step", "dagster._core.instance.factory",
    "dagster._core.storage.sqlite_storage", "dagster._core.storage.migration.utils",
    "dagster._core.executor.in_process", "dagster._core.execution.plan.active",
    "hypothesis", "hypothesis.strategies", "hypothesis.internal.conjecture.data", "mypy.version", "upath",
    "upath.implementations.local", "openai.resources.chat.completions.completions", "openai.lib.streaming.chat",
    "openai.pagination", "jiter", "h11", "anyio", "anyio.streams.tls", "truststore", "encodings.idna",
    "ruff._find_ruff", "httpcore2", "httpcore2._sync.connection_pool", "httpcore2._sync.http11", "httpcore",
)
SKIPPED_PACKAGES = ("kavi_assets.cli", "kavi.serve", "kavi.scale", "kavi_assets.launcher")
_log = logging.getLogger("kavi.launcher")


# -- the host (`python -m kavi_assets.launcher --fd N`)

def forge_modules() -> Iterator[str]:
    """Every module of the forge's packages a run may import (not the CLI, the server or the scale setup)."""
    import kavi
    import kavi_assets

    for package in (kavi, kavi_assets):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            name = info.name
            if name.endswith(".__main__") or name.startswith(SKIPPED_PACKAGES):
                continue
            yield name


def code_stamp() -> str:
    """The forge's source on disk (newest mtime and count of its .py files): a host of other code is replaced."""
    import kavi
    import kavi_assets

    newest, count = 0, 0
    for folder in (*kavi.__path__, *kavi_assets.__path__):
        for root, _dirs, files in os.walk(folder):
            for f in files:
                if f.endswith(".py"):
                    count += 1
                    try:
                        newest = max(newest, os.stat(os.path.join(root, f)).st_mtime_ns)
                    except OSError:
                        continue
    return f"{newest}:{count}"


def preload() -> list[str]:
    """Import what a run needs and build what every run builds (definitions, policy, the model SDK's HTTP client);
    returns what failed (a run then imports or builds it itself)."""
    failed: list[str] = []
    for name in (*RUN_MODULES, *forge_modules()):
        try:
            importlib.import_module(name)
        except ImportError:
            if name.startswith(("kavi.", "kavi_assets.")):
                failed.append(name)
        except Exception:  # a module a run would fail on too: the run reports it, not the host
            failed.append(name)
    for name in LOCATION_MODULES:
        try:
            importlib.import_module(name).defs.get_repository_def()
        except Exception:
            failed.append(name)
    try:
        from kavi.policy.policy import default_policy

        default_policy()
    except Exception:
        failed.append("the default policy")
    try:
        from kavi.llm.client import http_client

        http_client()
    except Exception:
        failed.append("the model SDK's HTTP client")
    return failed


def _dagster_command() -> Any:
    """The `dagster` console script's entry point, as installed."""
    (script,) = entry_points(group="console_scripts", name="dagster")
    return script.load()


def run_worker(input_json: str) -> int:
    """In the forked child: `dagster api execute_run INPUT_JSON`, in this already-loaded interpreter."""
    import atexit

    code = 0
    sys.argv = ["dagster", "api", "execute_run", input_json]
    try:
        _dagster_command()()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except BaseException:  # the run's own record carries the error; the exit code says it failed
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        atexit._run_exitfuncs()  # a fork ends with os._exit: run what an interpreter's exit would
        sys.stdout.flush()
        sys.stderr.flush()
    return code


def _fork(request: dict[str, object], ctl: socket.socket) -> int:
    input_json = request.get("input_json")
    if not isinstance(input_json, str):
        raise ValueError("a request names input_json")
    pid = os.fork()
    if pid == 0:  # the run worker
        code = 1
        try:
            ctl.close()
            code = run_worker(input_json)
        finally:
            os._exit(code)
    return pid


def _reap() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(ctl: socket.socket) -> None:
    failed = preload()
    _dagster_command()
    # Frozen: the run workers' garbage collections never walk (so never copy) the pages of what the host loaded.
    gc.collect()
    gc.freeze()
    ctl.send(json.dumps({"ready": True, "pid": os.getpid(), "stamp": code_stamp(), "failed": failed,
                         "threads": threading.active_count()}).encode())
    while True:
        ready, _, _ = select.select([ctl], [], [], 1.0)
        _reap()
        if not ready:
            continue
        try:
            raw = ctl.recv(1 << 20)
        except OSError:
            return
        if not raw:
            return  # the launcher is gone
        try:
            reply: dict[str, object] = {"pid": _fork(json.loads(raw), ctl)}
        except Exception as err:  # a malformed request or a failed fork: the launcher reports it on the run
            reply = {"error": f"{type(err).__name__}: {err}"[:500]}
        ctl.send(json.dumps(reply).encode())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kavi_assets.launcher")
    parser.add_argument("--fd", type=int, required=True)
    args = parser.parse_args(argv)
    # Stopping the daemon's process group stops the host, even where the daemon was started with these ignored.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    ctl = socket.socket(fileno=args.fd)
    try:
        serve(ctl)
    finally:
        ctl.close()


# -- the launcher (in the daemon)

def _same_python(a: str, b: str) -> bool:
    """The same interpreter of the same environment (`python` and `python3.11` of one virtual environment are)."""
    if a == b:
        return True
    try:
        return os.path.dirname(a) == os.path.dirname(b) and os.path.samefile(a, b)
    except OSError:
        return False


def spawn_worker(input_json: str, executable: str) -> int:
    """A run worker in a fresh interpreter (`dagster api execute_run`), reaped by a thread of this process."""
    proc = subprocess.Popen([executable, "-m", "dagster", "api", "execute_run", input_json],
                            stdin=subprocess.DEVNULL, start_new_session=True)
    threading.Thread(target=proc.wait, name=f"kavi-run-worker-{proc.pid}", daemon=True).start()
    return proc.pid


class HostUnavailable(RuntimeError):
    """The run host could not start or stopped answering."""


class RunHost:
    """A client of one host process this launcher starts (one request at a time over its socket)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answering = True
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._sock = ours
        # The host and its runs stay in the daemon's process group: stopping the group stops them too.
        self.proc: subprocess.Popen[bytes] = subprocess.Popen(
            [sys.executable, "-m", "kavi_assets.launcher", "--fd", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
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
        return self._answering and self.proc.poll() is None

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
        """Close the socket: the host exits (runs it forked carry on); reap it."""
        try:
            self._sock.close()
        finally:
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
            self._host = RunHost()
            if self._host.failed:
                _log.warning("the run host could not import %s (runs import them themselves)",
                             ", ".join(self._host.failed[:5]))
            return self._host

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        origin = run.job_code_origin
        if origin is None or not self.ours(run):
            self._fallback.launch_run(context)
            return
        input_json = serialize_value(ExecuteRunArgs(job_origin=origin, run_id=run.run_id,
                                                    instance_ref=self._instance.get_ref(),
                                                    set_exit_code_on_failure=True))
        kind = "prefork"
        try:
            if not self.forks(run):
                raise HostUnavailable(f"the run names another Python ({origin.executable_path})")
            pid = self._running_host().fork(input_json)
        except HostUnavailable as err:  # a dead host is replaced at the next launch
            _log.warning("%s; run %s gets a fresh run worker process", err, run.run_id)
            pid, kind = spawn_worker(input_json, origin.executable_path), "process"
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


if __name__ == "__main__":
    main()
