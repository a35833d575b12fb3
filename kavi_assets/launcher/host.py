"""The run host: one long-lived process that imported Dagster and the forge once, and forks a run worker per run.

A run worker started the default way (a code server spawning a fresh interpreter per run) imports Dagster, openai,
DuckDB, pydantic and the forge and loads the definitions before its first step, most of a queued run's CPU with
eight runs at once (README, "Forging many at once"). Forked from this host, a run worker starts with all of that
in memory (copy-on-write) and runs exactly what `dagster api execute_run` runs — the run-worker entry point
Dagster's Docker and Kubernetes launchers start — in a few milliseconds.

Protocol, over the SOCK_SEQPACKET socket whose descriptor the launcher passes (`--fd`): the host sends
`{"ready": true, "stamp": ...}` once its imports are done; each request `{"input_json": ...}` (a serialized
ExecuteRunArgs) is answered `{"pid": N}` or `{"error": "..."}`. The host never runs a step itself, holds no
connection (so a fork shares no socket or file lock with its parent), reaps its children, and exits when the
launcher's end of the socket closes; runs already forked carry on to their end.
"""

import argparse
import atexit
import gc
import importlib
import json
import os
import pkgutil
import select
import signal
import socket
import sys
import threading
from collections.abc import Iterator

# Imported once here, never again per run, besides the forge's own modules: Dagster's storage and run-worker entry
# point, and what the forge imports inside functions (the case generator, the mypy gate's cache key, the model
# client's SDK). Measured: what forked runs still imported, by comparing sys.modules at their end with the host's.
# One this installation lacks (httpcore2 or httpcore: the HTTP core of the installed openai SDK) is skipped.
RUN_MODULES = (
    "dagster", "dagster._cli.api", "dagster._core.storage.runs.sqlite.sqlite_run_storage",
    "dagster._core.storage.event_log.sqlite.sqlite_event_log",
    "dagster._core.storage.schedules.sqlite.sqlite_schedule_storage", "dagster._core.storage.local_compute_log_manager",
    "dagster._core.execution.api", "dagster._core.execution.plan.execute_step", "dagster._core.instance.factory",
    "dagster._core.storage.sqlite_storage", "dagster._core.storage.migration.utils", "kavi_assets.launcher.storage",
    "dagster._core.executor.in_process", "dagster._core.execution.plan.active",
    "hypothesis", "hypothesis.strategies", "hypothesis.internal.conjecture.data", "mypy.version", "upath",
    "upath.implementations.local", "openai.resources.chat.completions.completions", "openai.lib.streaming.chat",
    "openai.pagination", "jiter", "h11", "anyio", "anyio.streams.tls", "truststore", "encodings.idna",
    "ruff._find_ruff", "httpcore2", "httpcore2._sync.connection_pool", "httpcore2._sync.http11", "httpcore",
)
LOCATION_MODULES = ("kavi_assets.definitions", "kavi_assets.queue_definitions")
# Options `kavi forge --all` gives the daemon it starts (kavi_assets/launcher/daemon.py), for that process's launcher
# alone. PRESTART_OPTION: the launcher starts its host as soon as the daemon creates it, so the batch's first runs
# do not wait for the host's imports (elsewhere the host starts with the first run). HANDED_OPTION
# "FD:HOST_PID:PARENT_PID": a host the command started itself (before the daemon, so its imports overlap the
# daemon's), whose socket the daemon inherited as FD; only a process whose parent is PARENT_PID takes it.
PRESTART_OPTION = "--prestart-run-host"
HANDED_OPTION = "--run-host"
SKIPPED_PACKAGES = ("kavi_assets.cli", "kavi.serve", "kavi.scale", "kavi_assets.launcher")


def forge_modules() -> Iterator[str]:
    """Every module of the forge's packages a run may import, by name (not the CLI, the server or the scale setup)."""
    import kavi
    import kavi_assets

    for package in (kavi, kavi_assets):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            name = info.name
            if name.endswith(".__main__") or name.startswith(SKIPPED_PACKAGES):
                continue
            yield name


def code_stamp() -> str:
    """The forge's source as the host imported it: newest modification time and file count of its .py files. The
    launcher starts a new host when the stamp on disk differs, so an edited forge is never run from stale memory."""
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
    """Import what a run needs, build the location's definitions, parse the default policy, build the model SDK's
    HTTP client and read Dagster's migration scripts (cached per process: once here for every fork); returns what
    failed (a run imports or builds it itself, as without the host)."""
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

        http_client()  # the model SDK's HTTP client and its TLS trust store, built once here (no connection yet)
    except Exception:
        failed.append("the model SDK's HTTP client")
    try:
        from kavi_assets.launcher.storage import head_revision

        head_revision()  # Dagster's migration scripts, read once here, not by each worker opening its instance
    except Exception:
        failed.append("Dagster's migration scripts")
    return failed


def run_worker(input_json: str) -> int:
    """In the forked child: what `dagster api execute_run INPUT_JSON` does, in this already-loaded interpreter."""
    from dagster._cli.api import api_cli

    from kavi_assets.launcher.storage import hold_connections

    hold_connections()  # this process writes one run's events and ends with os._exit
    code = 0
    try:
        api_cli.main(args=["execute_run", input_json], prog_name="dagster api", standalone_mode=True)
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except BaseException:  # the run's own record carries the error; the exit code says it failed
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        # A fork ends with os._exit: run what an interpreter's exit would (e.g. the ledger's lock figures).
        atexit._run_exitfuncs()
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
    # What the host loaded stays as it is for every fork: frozen, the run workers' garbage collections never walk
    # (and so never write to, and copy) the pages of these objects.
    gc.collect()
    gc.freeze()
    threads = threading.active_count()
    ctl.send(json.dumps({"ready": True, "pid": os.getpid(), "stamp": code_stamp(), "failed": failed,
                         "threads": threads}).encode())
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


if __name__ == "__main__":
    main()
