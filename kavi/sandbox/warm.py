"""The warm runner: gate jobs forked from a server that imported the gate tools once, an opt-in for machines where
bubblewrap cannot build the gate sandbox (`KAVI_WARM_RUNNER=1`; where the sandbox can be built it is never used).

`run_sandboxed` starts a fresh interpreter per job, which pays the imports of pytest, coverage, mypy and
pydantic every time (most of a gate's cost on a small skill). With the warm runner asked for, `run_warm` runs the
same command line in a fork of a long-lived server (`kavi.sandbox.warm_server`) instead, with every limit of a
fresh process but no mount isolation of its own, layer by layer:

- environment: the server starts with a scrubbed environment; each job replaces it with its own scrubbed one;
- rlimits: set by the forked child for the job before it runs (cpu, address space, file size, processes);
- processes: the child joins the job's own pids cgroup before it runs anything of the job;
- network: the server starts in an empty network namespace and each job enters a new one of its own;
- wall timeout: the forge kills the job's session and cgroup, as for a fresh process;
- the server never runs generated code, cannot be ptrace'd by a job, and a job keeps none of its descriptors.

Where the server is off or cannot start, `run_warm` runs `run_sandboxed` and says so in the isolation report.
"""

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kavi.sandbox import jail
from kavi.sandbox.runner import (
    MAX_CAPTURE,
    Limits,
    SandboxResult,
    _PidsCgroup,
    netns_prefix,
    pids_cgroup_available,
    run_sandboxed,
    scrubbed_env,
)
from kavi.settings import read_setting

# What the gates import: loaded once by the server, never again per gate.
GATE_PRELOAD: tuple[str, ...] = (
    "pydantic",
    "kavi_assets.skills.base",
    "kavi_assets.runtime.handles",  # the handles as forged tests import them
    "kavi.runtime.context",  # and as the acceptance runner builds a skill's context
    "kavi.runtime.model_endpoint",
    "kavi.gates.acceptance_runner",
    "coverage",
    "coverage.cmdline",
    "coverage.control",
    "pytest",
    "mypy.main",
    "mypy.build",
)
START_TIMEOUT_S = 60.0
REAP_GRACE_S = 10.0


class WarmRunnerUnavailable(RuntimeError):
    """The warm runner could not start or died; the caller may fall back to a fresh interpreter."""


def _rlimits(limits: Limits) -> list[tuple[str, int, int]]:
    mem = limits.address_space_mb * 1024 * 1024
    size = limits.file_size_mb * 1024 * 1024
    return [("RLIMIT_CPU", limits.cpu_s, limits.cpu_s + 1), ("RLIMIT_AS", mem, mem), ("RLIMIT_FSIZE", size, size),
            ("RLIMIT_NPROC", limits.max_processes, limits.max_processes), ("RLIMIT_CORE", 0, 0)]


def _job_form(argv: Sequence[str]) -> tuple[str, str, list[str]] | None:
    """(mode, target, args) for `python -m MOD ...`, `python -c CODE ...` or an absolute binary; else None."""
    if not argv:
        return None
    if argv[0] == sys.executable:
        if len(argv) >= 3 and argv[1] == "-m":
            return "module", argv[2], list(argv[3:])
        if len(argv) >= 3 and argv[1] == "-c":
            return "code", argv[2], list(argv[3:])
        return None
    if os.path.isabs(argv[0]) and os.access(argv[0], os.X_OK):
        return "exec", argv[0], list(argv[1:])
    return None


def _drain(fd: int, sink: bytearray) -> None:
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            if len(sink) < MAX_CAPTURE:
                sink.extend(chunk[: MAX_CAPTURE - len(sink)])
    except OSError:
        return
    finally:
        os.close(fd)


def _feed(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except OSError:
        pass
    finally:
        os.close(fd)


class WarmRunner:
    """A client of one server process. Thread-safe: each job has its own pipes and its own job socket."""

    def __init__(self, workdir: Path, preload: Sequence[str] = GATE_PRELOAD) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "home").mkdir(exist_ok=True)
        (workdir / "tmp").mkdir(exist_ok=True)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._ctl = ours
        self._send_lock = threading.Lock()
        prefix, self.network_note = netns_prefix()
        argv = [*prefix, sys.executable, "-m", "kavi.sandbox.warm_server", "--fd", str(theirs.fileno()),
                "--preload", ",".join(preload)]
        self.proc = subprocess.Popen(
            argv, cwd=workdir, env=scrubbed_env(workdir, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}),
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, start_new_session=True,
        )
        theirs.close()
        self._ctl.settimeout(START_TIMEOUT_S)
        try:
            hello = json.loads(self._ctl.recv(65536) or b"{}")
        except (OSError, json.JSONDecodeError) as err:
            self.close()
            raise WarmRunnerUnavailable(f"the warm runner did not start: {err}") from None
        if not hello.get("ready"):
            err_text = self.proc.stderr.read().decode(errors="replace")[-500:] if self.proc.stderr else ""
            self.close()
            raise WarmRunnerUnavailable(f"the warm runner did not start: {err_text.strip() or 'no greeting'}")
        self._ctl.settimeout(None)
        self.preloaded: list[str] = list(hello.get("preloaded", []))
        self.netns_per_job: bool = bool(hello.get("netns_per_job"))
        self.owner_pid = os.getpid()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and os.getpid() == self.owner_pid

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._ctl.close()
        try:
            self.proc.wait(2)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def _isolation(self, limits: Limits, cgroup: "_PidsCgroup | None", cgroup_note: str) -> dict[str, str]:
        if self.netns_per_job:
            network = "active: a new empty network namespace per job (entered by the forked child)"
        elif self.network_note.startswith("active"):
            network = "active: the warm runner's empty network namespace (shared by its jobs, no route out)"
        else:
            network = self.network_note
        return {
            "environment": "active: scrubbed (no secrets, keys, KAVI_* or DAGSTER_* variables)",
            "rlimits": (f"active: cpu {limits.cpu_s}s, address space {limits.address_space_mb} MB, "
                        f"file size {limits.file_size_mb} MB (set by the forked child before the job runs)"),
            "wall_timeout": f"active: {limits.wall_s:.0f}s, kills the whole process group",
            "working_dir": "active: cwd, HOME and TMPDIR inside the sandbox",
            "net": network,
            "cgroup": cgroup_note,
            "user": f"omitted: no gate sandbox here ({jail.probe()}); jobs run as the forge's user",
            "mount": (f"omitted: no gate sandbox here ({jail.probe()}); the host filesystem is writable by the "
                      "forge's user"),
            "pid": "omitted: no gate sandbox here; jobs share the forge's PID namespace",
            "seccomp": "omitted: no gate sandbox here",
            "interpreter": ("active: forked from the warm runner, which never runs generated code "
                            f"(preloaded: {', '.join(self.preloaded) or 'nothing'})"),
        }

    def run(self, argv: Sequence[str], *, cwd: Path, limits: Limits, env_extra: Mapping[str, str] | None = None,
            stdin: bytes | None = None) -> SandboxResult:
        form = _job_form(argv)
        if form is None:
            raise ValueError(f"the warm runner runs `python -m`, `python -c` or an absolute binary, not {argv[:2]}")
        if limits.network:
            raise ValueError("the warm runner runs jobs without network only")
        if any(k.startswith("PYTHON") for k in (env_extra or {})):
            raise ValueError("PYTHON* variables act at interpreter start, which a forked job does not have")
        cwd.mkdir(parents=True, exist_ok=True)
        (cwd / "home").mkdir(exist_ok=True)
        (cwd / "tmp").mkdir(exist_ok=True)
        cgroup: _PidsCgroup | None = None
        if pids_cgroup_available():
            try:
                cgroup = _PidsCgroup(limits.max_processes)
                cgroup_note = (f"active: pids cgroup, at most {limits.max_processes} processes "
                               "(joined by the child before the job runs)")
            except OSError as err:
                cgroup_note = f"omitted: pids cgroup unavailable ({err.strerror}); RLIMIT_NPROC only"
        elif os.geteuid() == 0:
            cgroup_note = "omitted: no pids cgroup, and RLIMIT_NPROC does not bind root"
        else:
            cgroup_note = f"active: RLIMIT_NPROC {limits.max_processes} (per user)"
        mode, target, args = form
        request = {"mode": mode, "target": target, "args": args, "cwd": str(cwd),
                   "env": scrubbed_env(cwd, env_extra), "rlimits": _rlimits(limits),
                   "cgroup_procs": cgroup.join_path() if cgroup else None, "new_netns": self.netns_per_job}
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        job_ours, job_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        out, errbuf = bytearray(), bytearray()
        t0 = time.monotonic()
        timed_out = False
        pid: int | None = None
        status: int | None = None
        threads: list[threading.Thread] = []
        try:
            try:
                with self._send_lock:
                    socket.send_fds(self._ctl, [json.dumps(request).encode()], [in_r, out_w, err_w,
                                                                                job_theirs.fileno()])
            except OSError as err:
                os.close(in_w)
                os.close(out_r)
                os.close(err_r)
                raise WarmRunnerUnavailable(f"the warm runner is gone: {err}") from None
            finally:
                for fd in (in_r, out_w, err_w):
                    os.close(fd)
                job_theirs.close()
            threads = [threading.Thread(target=_drain, args=(out_r, out), daemon=True),
                       threading.Thread(target=_drain, args=(err_r, errbuf), daemon=True),
                       threading.Thread(target=_feed, args=(in_w, stdin or b""), daemon=True)]
            for t in threads:
                t.start()
            job_ours.settimeout(START_TIMEOUT_S)
            pid = int(self._recv(job_ours)["pid"])
            job_ours.settimeout(max(0.01, limits.wall_s - (time.monotonic() - t0)))
            try:
                status = int(self._recv(job_ours)["status"])
            except TimeoutError:
                timed_out = True
            self._kill(pid, cgroup)  # whatever the outcome, nothing the job started may outlive it
            if status is None:
                job_ours.settimeout(REAP_GRACE_S)
                status = int(self._recv(job_ours)["status"])
            for t in threads:
                t.join(5)
        except (OSError, ValueError, KeyError) as err:
            if pid is not None:
                self._kill(pid, cgroup)
            raise WarmRunnerUnavailable(f"the warm runner failed this job: {err}") from None
        except WarmRunnerUnavailable:
            if pid is not None:
                self._kill(pid, cgroup)
            raise
        finally:
            job_ours.close()
            if cgroup is not None:
                cgroup.remove()
        rc = os.waitstatus_to_exitcode(status)
        return SandboxResult(
            returncode=rc,
            stdout=out.decode("utf-8", "replace"),
            stderr=errbuf.decode("utf-8", "replace"),
            duration_s=time.monotonic() - t0,
            timed_out=timed_out,
            killed_by_signal=-rc if rc < 0 else None,
            isolation=self._isolation(limits, cgroup, cgroup_note),
        )

    @staticmethod
    def _kill(pid: int, cgroup: "_PidsCgroup | None") -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        if cgroup is not None:
            cgroup.kill_all()

    @staticmethod
    def _recv(sock: socket.socket) -> dict[str, Any]:
        data = sock.recv(65536)
        if not data:
            raise WarmRunnerUnavailable("the warm runner closed the job without an answer")
        msg: dict[str, Any] = json.loads(data)
        if "error" in msg:
            raise WarmRunnerUnavailable(str(msg["error"]))
        return msg


_lock = threading.Lock()
_runner: WarmRunner | None = None
_unavailable: str | None = None


def _default_workdir() -> Path:
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="kavi-warm-runner-"))
    atexit.register(shutil.rmtree, path, True)  # registered first, so it runs after the runner has stopped
    return path


def warm_runner(workdir: Path | None = None, enabled: bool | None = None) -> WarmRunner | None:
    """This process's warm runner, started on first use (None when it cannot start here, or when it is not asked
    for: `enabled` False, or None and KAVI_WARM_RUNNER off, its default)."""
    global _runner, _unavailable
    with _lock:
        if not (read_setting("warm_runner") if enabled is None else enabled):
            _unavailable = "the warm runner is off: KAVI_WARM_RUNNER=1 turns it on"
            return None
        if _runner is not None and _runner.alive:
            return _runner
        if _runner is not None and os.getpid() == _runner.owner_pid:
            _runner.close()  # it died: start a fresh one
        _runner = None
        if _unavailable is not None and _unavailable.startswith("failed"):
            return None
        try:
            _runner = WarmRunner(workdir or _default_workdir())
        except (OSError, WarmRunnerUnavailable) as err:
            _unavailable = f"failed to start: {err}"
            return None
        _unavailable = None
        atexit.register(_runner.close)
        return _runner


def prestart(workdir: Path | None = None) -> None:
    """Start the warm runner in the background, so its imports overlap with the forge's other work."""
    if jail.probe() is None:
        return  # gate jobs run in the sandbox, each in a fresh interpreter: no warm runner to start
    threading.Thread(target=warm_runner, args=(workdir,), name="kavi-warm-runner-start", daemon=True).start()


def run_warm(
    argv: Sequence[str],
    *,
    cwd: Path,
    limits: Limits,
    env_extra: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    rw: Sequence[Path] = (),
    hold_stdin: Callable[[], object] | None = None,
    scratch: bool = False,
) -> SandboxResult:
    """A gate job in the gate sandbox (`run_sandboxed` under bubblewrap) where it can be had: a fresh interpreter
    in a world built for this one job. Only where the sandbox cannot be built here does the job fork from the
    warm runner (same limits, no mount isolation), or, failing that, start a fresh interpreter."""
    if jail.probe() is None:
        res = run_sandboxed(argv, cwd=cwd, limits=limits, env_extra=env_extra, stdin=stdin, rw=rw,
                            hold_stdin=hold_stdin, scratch=scratch)
        res.isolation["interpreter"] = ("active: a fresh interpreter in a sandbox built for this job alone (a fork "
                                        "of a shared warm runner would share its mount namespace)")
        return res
    if hold_stdin is not None:
        hold_stdin()  # a fork starts in milliseconds: nothing to overlap
    runner = warm_runner() if _job_form(argv) is not None and not limits.network else None
    if runner is not None:
        try:
            return runner.run(argv, cwd=cwd, limits=limits, env_extra=env_extra, stdin=stdin)
        except WarmRunnerUnavailable:
            pass  # it died under this job (perhaps killed by another job): this job runs in a fresh process
    res = run_sandboxed(argv, cwd=cwd, limits=limits, env_extra=env_extra, stdin=stdin)
    note = _unavailable or "the warm runner was unavailable for this job"
    res.isolation["interpreter"] = f"omitted: a fresh interpreter per job ({note})"
    return res
