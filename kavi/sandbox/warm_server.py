"""The warm runner's server: a Python process that imports the gate tools once and forks one child per job.

It is started by `kavi.sandbox.warm` with a scrubbed environment (and in an empty network namespace
where the OS allows it) and never runs generated code itself: every job runs in a fresh fork that, before it
runs anything of the job, joins the job's pids cgroup, leaves for a new session, enters its own empty network
namespace, sets the job's rlimits, takes the job's pipes as stdin/stdout/stderr, closes every other inherited
descriptor, and takes the job's environment and working directory. A fork of a process that has already
imported pytest, coverage, mypy and pydantic starts in milliseconds, where a fresh interpreter pays those
imports again for every gate.

Protocol (a SOCK_SEQPACKET socket inherited at --fd): the client sends one JSON request per job, with four
descriptors attached (stdin, stdout, stderr, a job socket). On the job socket the server answers
{"pid": N} once the child exists and {"status": S} (a waitpid status) once it has been reaped.
"""

import argparse
import contextlib
import ctypes
import ctypes.util
import io
import json
import os
import resource
import selectors
import signal
import socket
import sys
import tempfile
import traceback
import types
from pathlib import Path
from typing import Any

from kavi.process_env import replace_environment

CLONE_NEWNET = 0x40000000
PR_SET_DUMPABLE = 4
SETUP_FAILED = 126  # the exit code of a child whose isolation could not be set up (nothing of the job ran)
MAX_REQUEST = 1 << 20

_libc: Any = None


def _lib() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    return _libc


def _unshare_net() -> str | None:
    """Enter a new, empty network namespace; None on success, else why not."""
    try:
        if _lib().unshare(CLONE_NEWNET) == 0:
            return None
        return os.strerror(ctypes.get_errno())
    except (OSError, AttributeError) as err:
        return str(err)


def _set_dumpable(flag: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        _lib().prctl(PR_SET_DUMPABLE, flag, 0, 0, 0)


# -- preloading --------------------------------------------------------------------------------------

_WARM_TEST = "def test_kavi_warm_runner_preload() -> None:\n    assert [1, 2][-1] == 2\n"


def _warm_pytest(workdir: Path) -> None:
    """Run one trivial test so pytest's lazily imported plugins and reporters are loaded in the server."""
    import pytest

    d = workdir / "pytest-warmup"
    d.mkdir(parents=True, exist_ok=True)
    (d / "test_kavi_warm_runner_preload.py").write_text(_WARM_TEST)
    (d / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    saved_path, saved_meta = list(sys.path), list(sys.meta_path)
    before = set(sys.modules)
    out, err = sys.stdout, sys.stderr
    sink = io.StringIO()
    sys.stdout = sys.stderr = sink
    try:
        pytest.main(["-q", "-c", str(d / "pytest.ini"), "--rootdir", str(d), f"--junitxml={d / 'junit.xml'}",
                     "--no-header", str(d / "test_kavi_warm_runner_preload.py")])
    finally:
        sys.stdout, sys.stderr = out, err
        sys.path[:] = saved_path
        sys.meta_path[:] = saved_meta
        for name in set(sys.modules) - before:
            if name.startswith("test_kavi_warm_runner"):
                del sys.modules[name]


def preload(modules: list[str], workdir: Path) -> list[str]:
    """Import the gate tools once; what could not be imported is simply imported again by each job."""
    import importlib

    loaded = []
    for name in modules:
        try:
            if name == "pytest":
                _warm_pytest(workdir)
            else:
                importlib.import_module(name)
            loaded.append(name)
        except Exception:  # a module that cannot preload is loaded by the job itself
            continue
    return loaded


# -- the child -----------------------------------------------------------------------------------------


def _fresh_stdio() -> None:
    """Streams on fds 0-2 as a fresh interpreter has them (UTF-8, stderr line-buffered)."""
    stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
    stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding="utf-8",
                              errors="backslashreplace", line_buffering=True)
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = stdin, stdout, stderr  # type: ignore[misc]


def _setup_failed(msg: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, f"kavi warm runner: the job's isolation could not be set up: {msg}\n".encode())
    os._exit(SETUP_FAILED)


def _isolate(req: dict[str, Any], fds: list[int]) -> None:
    """Everything before the job runs. Any failure ends the child before a line of the job has run."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    procs = req.get("cgroup_procs")
    if procs:
        try:
            with open(procs, "w") as fh:  # joined first: nothing the job forks can escape the cgroup
                fh.write(str(os.getpid()))
        except OSError as err:
            _setup_failed(f"cannot join the pids cgroup: {err}")
    os.setsid()
    if req.get("new_netns"):
        why = _unshare_net()
        if why is not None:
            _setup_failed(f"cannot enter a new network namespace: {why}")
    for res_name, soft, hard in req.get("rlimits", []):
        try:
            resource.setrlimit(getattr(resource, res_name), (soft, hard))
        except (OSError, ValueError, AttributeError) as err:
            _setup_failed(f"cannot set {res_name}: {err}")
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
    try:
        os.chdir(req["cwd"])
    except OSError as err:
        _setup_failed(f"cannot enter {req['cwd']}: {err}")
    replace_environment(req["env"])  # the job's variables and nothing of the server's
    tempfile.tempdir = None  # TMPDIR is read again from the job's environment
    _set_dumpable(1)  # the job is an ordinary process again (the server itself stays non-dumpable)
    _fresh_stdio()


def _exit_code(err: SystemExit) -> int:
    code = err.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _run_job(req: dict[str, Any]) -> int:
    """Run the job as `python -m MOD`, `python -c CODE` or an exec'd binary would run, in this process."""
    mode, target, args = req["mode"], req["target"], list(req.get("args", []))
    if mode == "exec":
        os.execve(target, [target, *args], dict(req["env"]))
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    sys.path[0] = os.getcwd()  # a fresh interpreter started with -m or -c puts its directory first
    try:
        if mode == "module":
            import runpy

            sys.argv = [target, *args]
            runpy._run_module_as_main(target, alter_argv=True)  # type: ignore[attr-defined]
        elif mode == "code":
            sys.argv = ["-c", *args]
            main.__dict__.update(__name__="__main__", __builtins__=__builtins__)
            exec(compile(target, "<string>", "exec"), main.__dict__)
        else:
            print(f"kavi warm runner: unknown job mode {mode!r}", file=sys.stderr)
            return 2
        code = 0
    except SystemExit as err:
        code = _exit_code(err)
    except BaseException:  # reported as a fresh interpreter reports an uncaught exception
        _, value, tb = sys.exc_info()
        if value is not None and tb is not None:  # the job's frames only, as a fresh interpreter shows them
            value = value.with_traceback(tb.tb_next)
            sys.excepthook(type(value), value, tb.tb_next)
        code = 1
    return code


def _finish(code: int) -> None:
    """Interpreter shutdown as a fresh process has it: wait for threads, run atexit, flush, exit."""
    import atexit
    import threading

    try:
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
    except SystemExit as err:
        code = _exit_code(err)
    except BaseException:
        with contextlib.suppress(BaseException):
            sys.excepthook(*sys.exc_info())
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    os._exit(code & 0xFF if code >= 0 else 1)


def _child(req: dict[str, Any], fds: list[int]) -> None:
    try:
        _isolate(req, fds)
        code = _run_job(req)
    except BaseException:  # never return into the server loop
        with contextlib.suppress(BaseException):
            traceback.print_exc()
        os._exit(SETUP_FAILED)
    _finish(code)


# -- the server loop ---------------------------------------------------------------------------------


def _send(sock: socket.socket, data: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        sock.send(json.dumps(data).encode())


def serve(ctl: socket.socket, ready: dict[str, Any]) -> None:
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    sel = selectors.DefaultSelector()
    sel.register(ctl, selectors.EVENT_READ, "ctl")
    sel.register(wake_r, selectors.EVENT_READ, "child")
    jobs: dict[int, socket.socket] = {}
    _send(ctl, ready)
    while True:
        for key, _ in sel.select():
            if key.data == "child":
                with contextlib.suppress(OSError):
                    while os.read(wake_r, 512):
                        pass
                _reap(jobs)
                continue
            try:
                msg, fds, _flags, _addr = socket.recv_fds(ctl, MAX_REQUEST, 4)
            except OSError:
                msg, fds = b"", []
            if not msg:  # the client is gone: so are its jobs
                for pid in list(jobs):
                    with contextlib.suppress(OSError):
                        os.killpg(pid, signal.SIGKILL)
                return
            _start(msg, fds, jobs)
        _reap(jobs)


def _start(msg: bytes, fds: list[int], jobs: dict[int, socket.socket]) -> None:
    if len(fds) != 4:
        for fd in fds:
            os.close(fd)
        return
    job_sock = socket.socket(fileno=fds[3])
    try:
        req = json.loads(msg)
    except json.JSONDecodeError as err:
        _send(job_sock, {"error": f"bad request: {err}"})
        job_sock.close()
        for fd in fds[:3]:
            os.close(fd)
        return
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(req, fds)
    for fd in fds[:3]:
        os.close(fd)
    jobs[pid] = job_sock
    _send(job_sock, {"pid": pid})


def _reap(jobs: dict[int, socket.socket]) -> None:
    while jobs:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        sock = jobs.pop(pid, None)
        if sock is not None:
            _send(sock, {"status": status})
            sock.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Kavi warm runner server (started by the forge, not by hand).")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--preload", default="")
    args = parser.parse_args(argv)
    ctl = socket.socket(fileno=args.fd)
    # Same-user processes (a job included) cannot attach to or read the memory of the server.
    _set_dumpable(0)
    probe = os.fork()
    if probe == 0:
        os._exit(0 if _unshare_net() is None else 1)
    _, probe_status = os.waitpid(probe, 0)
    loaded = preload([m for m in args.preload.split(",") if m], Path.cwd())
    serve(ctl, {"ready": True, "pid": os.getpid(), "preloaded": loaded,
                "netns_per_job": os.waitstatus_to_exitcode(probe_status) == 0})


if __name__ == "__main__":
    main()
