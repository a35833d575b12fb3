"""Run a command on generated code with every isolation layer this OS allows, and say which were active."""

import contextlib
import functools
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kavi.sandbox import jail

MAX_CAPTURE = 200_000
PIDS_CGROUP_ROOT = Path("/sys/fs/cgroup/pids")
MEMORY_CGROUP_ROOT = Path("/sys/fs/cgroup/memory")
CPU_CGROUP_ROOT = Path("/sys/fs/cgroup/cpu")
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Limits:
    wall_s: float = 60.0
    cpu_s: int = 30
    address_space_mb: int = 2048
    file_size_mb: int = 64
    max_processes: int = 64
    network: bool = False
    scratch_mb: int = 256  # the size of a job's directory when it runs on a scratch tmpfs (see run_sandboxed)


@dataclass(frozen=True)
class SandboxResult:
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool
    killed_by_signal: int | None
    isolation: dict[str, str] = field(default_factory=dict)
    # True once the sandbox was built and the command about to start (a marker written before the exec, so
    # nothing the command does can unsay it); False when the sandbox never got that far; None where unknown.
    started: bool | None = None
    # With hold_stdin: the command had already ended when its stdin was released (it never saw its job).
    ended_before_release: bool = False


@functools.cache
def netns_prefix() -> tuple[tuple[str, ...], str]:
    """The command prefix that gives a child a fresh, empty network namespace, or why there is none."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return (), "omitted: util-linux unshare is not installed"
    for prefix in ((unshare, "--net"), (unshare, "--net", "--map-root-user")):
        try:
            ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=10, check=False).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            how = " ".join(p.rsplit("/", 1)[-1] for p in prefix)
            return prefix, f"active: new empty network namespace ({how})"
    return (), "omitted: this kernel or container does not allow unprivileged network namespaces"


@functools.cache
def pids_cgroup_available() -> bool:
    probe = PIDS_CGROUP_ROOT / f"kavi-probe-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    sweep_leaked_cgroups()  # once per process, before its first job
    return True


# A job's cgroup is joined within milliseconds of being made; one still empty after this long was left by a process
# killed outright (its own removal never ran).
LEAKED_AFTER_S = 300.0


def sweep_leaked_cgroups(min_age_s: float = LEAKED_AFTER_S) -> int:
    """Remove the kavi-* cgroups no process is in that were made more than `min_age_s` ago (left by a process killed
    before it removed them); the kernel refuses to remove one a process is still in. Returns how many went."""
    removed = 0
    now = time.time()
    for root in (PIDS_CGROUP_ROOT, MEMORY_CGROUP_ROOT, CPU_CGROUP_ROOT):
        try:
            entries = [e for e in root.iterdir() if e.name.startswith("kavi-") and e.is_dir()]
        except OSError:
            continue
        for entry in entries:
            try:
                if now - entry.stat().st_mtime < min_age_s or (entry / "cgroup.procs").read_text().strip():
                    continue
                entry.rmdir()
                removed += 1
            except OSError:
                continue
    return removed


def scrubbed_env(sandbox: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Nothing of the parent's environment: no keys, tokens, KAVI_* or DAGSTER_* variables reach the child."""
    bindir = str(Path(sys.executable).parent)
    env = {
        "PATH": f"{bindir}:{SAFE_PATH}",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(sandbox / "home"),
        "TMPDIR": str(sandbox / "tmp"),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        # No pydantic plugins: finding them reads every installed distribution's entry points in each job (a fresh
        # interpreter), and a gate job runs no third-party hooks it did not ask for.
        "PYDANTIC_DISABLE_PLUGINS": "__all__",
        "NO_COLOR": "1",
    }
    env.update(extra or {})
    return env


class _PidsCgroup:
    def __init__(self, max_processes: int, memory_bytes: int | None = None) -> None:
        self.path = PIDS_CGROUP_ROOT / f"kavi-{uuid.uuid4().hex[:12]}"
        self.path.mkdir()
        (self.path / "pids.max").write_text(str(max_processes))
        # Where the memory controller is there too, the job's processes together get at most `memory_bytes`
        # (the address-space rlimit binds each process alone; sixty-four of them could still starve the host).
        self.memory: Path | None = None
        if memory_bytes is not None and MEMORY_CGROUP_ROOT.is_dir():
            mem = MEMORY_CGROUP_ROOT / self.path.name
            try:
                mem.mkdir()
                (mem / "memory.limit_in_bytes").write_text(str(memory_bytes))
                swap = mem / "memory.memsw.limit_in_bytes"
                if swap.exists():
                    swap.write_text(str(memory_bytes))
                self.memory = mem
            except OSError:
                with contextlib.suppress(OSError):
                    mem.rmdir()
        self.cpu: Path | None = None  # made when the job is told to yield (make_idle)

    def make_idle(self) -> None:
        """Move the job's processes into a CPU group of their own that runs only when nothing else wants the CPU
        (cpu.idle; where the kernel lacks it, the lowest weight). Stronger than niceness: the kernel weighs groups
        (and sessions) against each other before the threads inside them. Nothing where no such group can be made."""
        if self.cpu is None:
            if not CPU_CGROUP_ROOT.is_dir():
                return
            cpu = CPU_CGROUP_ROOT / self.path.name
            try:
                cpu.mkdir()
                idle = cpu / "cpu.idle"
                if idle.exists():
                    idle.write_text("1")
                else:
                    (cpu / "cpu.shares").write_text("2")
            except OSError:
                with contextlib.suppress(OSError):
                    cpu.rmdir()
                return
            self.cpu = cpu
        for pid in self.pids():
            with contextlib.suppress(OSError):
                (self.cpu / "cgroup.procs").write_text(str(pid))

    def join_path(self) -> str:
        return str(self.path / "cgroup.procs")

    def join_paths(self) -> list[str]:
        return [self.join_path(), *([str(self.memory / "cgroup.procs")] if self.memory else [])]

    def pids(self) -> list[int]:
        """The processes in the cgroup now ([] when it is gone)."""
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def signal_all(self) -> None:
        """SIGKILL every process in the cgroup once, without waiting for them to go."""
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def kill_all(self) -> None:
        """Kill every process in the cgroup and wait (at most about a second) until it is empty."""
        end = time.monotonic() + 1.0
        pause = 0.002
        while True:
            pids = self.pids()
            if not pids or time.monotonic() > end:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def remove(self) -> None:
        self.kill_all()
        for path in (self.path, self.memory, self.cpu):
            if path is None:
                continue
            end = time.monotonic() + 2.0
            pause = 0.002
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > end:
                        break
                    time.sleep(pause)
                    pause = min(pause * 2, 0.05)


def _limit_prefix(limits: Limits, nproc: int | None = None) -> tuple[list[str], str | None]:
    """prlimit sets the rlimits before the command starts (no preexec_fn: the forge runs gates from threads)."""
    prlimit = shutil.which("prlimit")
    mem = limits.address_space_mb * 1024 * 1024
    size = limits.file_size_mb * 1024 * 1024
    if prlimit is None:
        return [], "omitted: util-linux prlimit is not installed"
    procs = nproc if nproc is not None else limits.max_processes
    return [prlimit, f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}", f"--as={mem}", f"--fsize={size}",
            f"--nproc={procs}", "--core=0", "--"], None


# The shell writes its own pid into each cgroup (paths up to a `--`) before exec, so no child can be forked outside.
_JOIN_CGROUPS = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def _drain(stream: object, sink: bytearray) -> None:
    read = getattr(stream, "read")  # noqa: B009 - the pipe's read, bound once
    while True:
        chunk = read(65536)
        if not chunk:
            return
        if len(sink) < MAX_CAPTURE:
            sink.extend(chunk[: MAX_CAPTURE - len(sink)])


def _cgroup_for(limits: Limits, isolation: dict[str, str], off: frozenset[str]) -> "_PidsCgroup | None":
    if "cgroup" in off:
        isolation["cgroup"] = f"omitted: switched off by {jail.OFF_VARIABLE} (containment test)"
        return None
    if pids_cgroup_available():
        try:
            cgroup = _PidsCgroup(limits.max_processes, limits.address_space_mb * 1024 * 1024)
            memory = (f", memory cgroup (at most {limits.address_space_mb} MB for all its processes together)"
                      if cgroup.memory else ", no memory cgroup here (the address-space limit binds each process)")
            isolation["cgroup"] = (f"active: own pids cgroup (at most {limits.max_processes} processes){memory}; "
                                   "every process in it killed when the job ends")
            return cgroup
        except OSError as err:
            isolation["cgroup"] = f"omitted: pids cgroup unavailable ({err.strerror}); RLIMIT_NPROC only"
    elif os.geteuid() == 0:
        isolation["cgroup"] = "omitted: no pids cgroup here, and RLIMIT_NPROC does not bind root"
    else:
        isolation["cgroup"] = f"omitted: no pids cgroup here; RLIMIT_NPROC {limits.max_processes} (per user)"
    return None


@dataclass
class _Prepared:
    """A command wrapped in every layer this OS allows, and what must be cleaned up after it."""

    command: list[str]
    env: dict[str, str]
    pass_fds: list[int]
    isolation: dict[str, str]
    cgroup: "_PidsCgroup | None"
    jail_cmd: jail.JailCommand | None
    marker_r: int | None
    marker_w: int | None

    def after_spawn(self) -> None:
        """Close the descriptors only the child needed."""
        if self.jail_cmd is not None:
            self.jail_cmd.close()
        if self.marker_w is not None:
            os.close(self.marker_w)
            self.marker_w = None

    def release(self) -> None:
        """Kill what is left of the job and free its cgroup and descriptors."""
        if self.jail_cmd is not None:
            self.jail_cmd.close()
        if self.marker_w is not None:
            with contextlib.suppress(OSError):
                os.close(self.marker_w)
            self.marker_w = None
        if self.cgroup is not None:
            self.cgroup.remove()

    def started(self) -> bool | None:
        """Whether the sandbox was built and the command about to start (None where no marker was set)."""
        if self.marker_r is None:
            return None
        os.set_blocking(self.marker_r, False)
        try:
            return bool(os.read(self.marker_r, 16))
        except BlockingIOError:
            return False
        finally:
            os.close(self.marker_r)
            self.marker_r = None


def _prepare(argv: Sequence[str], *, cwd: Path, limits: Limits, env_extra: Mapping[str, str] | None,
             rw: Sequence[Path], scratch: bool, probe: bool = True,
             off_layers: Iterable[str] | None = None) -> _Prepared:
    off = jail.switched_off(off_layers)
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "home").mkdir(exist_ok=True)
    (cwd / "tmp").mkdir(exist_ok=True)
    isolation: dict[str, str] = {
        "environment": "active: scrubbed (no secrets, keys, KAVI_* or DAGSTER_* variables)",
        "rlimits": (f"active: cpu {limits.cpu_s}s, address space {limits.address_space_mb} MB, "
                    f"file size {limits.file_size_mb} MB"),
        "wall_timeout": f"active: {limits.wall_s:.0f}s, kills the whole process group",
        "working_dir": "active: cwd, HOME and TMPDIR inside the sandbox",
    }
    cgroup = _cgroup_for(limits, isolation, off)
    prefix: tuple[str, ...] = ()
    pass_fds: list[int] = []
    jail_cmd: jail.JailCommand | None = None
    problem = jail.probe() if probe else jail.quick_problem()
    if problem is None:
        jail_cmd = jail.build(cwd, rw, network=limits.network,
                              scratch_bytes=limits.scratch_mb * 1024 * 1024 if scratch else None, off_layers=off)
        jail.hand_over([cwd, *rw], jail_cmd.run_as)
        prefix = tuple(jail_cmd.prefix)
        pass_fds = list(jail_cmd.pass_fds)
        isolation.update(jail_cmd.isolation)
    else:
        for layer in ("user", "mount", "pid", "seccomp"):
            isolation[layer] = f"omitted: {problem}"
        if limits.network:
            isolation["net"] = "omitted: this run was allowed the network"
        else:
            prefix, isolation["net"] = netns_prefix()
    # With its own pids cgroup a job needs no per-user process limit, which all sandboxed jobs (one uid) share.
    limit_prefix, limit_problem = _limit_prefix(limits, 4096 if cgroup is not None else None)
    if limit_problem:
        isolation["rlimits"] = limit_problem
    marker_r: int | None = None
    marker_w: int | None = None
    bash = shutil.which("bash", path=SAFE_PATH)
    if jail_cmd is not None and bash is not None and bash.startswith(("/usr/", "/bin/")):
        marker_r, marker_w = os.pipe()
        pass_fds.append(marker_w)
        # Written inside the sandbox, after every layer is in place and before the command starts; then closed,
        # so the command never holds it. (bash: a POSIX sh takes only one-digit descriptors.)
        prefix = (*prefix, bash, "--norc", "--noprofile", "-c",
                  f'printf 1 >&{marker_w} && exec {marker_w}>&- && exec "$@"', "kavi-gate")
    command = [*limit_prefix, *prefix, *argv]
    if cgroup is not None:
        command = ["/bin/sh", "-c", _JOIN_CGROUPS, "kavi-sandbox", *cgroup.join_paths(), "--", *command]
    return _Prepared(command, scrubbed_env(cwd, env_extra), pass_fds, isolation, cgroup, jail_cmd, marker_r,
                     marker_w)


def run_sandboxed(
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
    """Run `argv` in `cwd` inside the gate sandbox (bubblewrap: user, mount, pid, net, ipc, uts and cgroup
    namespaces, seccomp), under rlimits, in its own pids cgroup, with a scrubbed environment and a wall timeout
    that kills every process it started. `cwd` and `rw` are the only places it can write. Where a layer cannot
    be had, the isolation report says so, with the reason.

    With `scratch`, the job sees `cwd` as a tmpfs of `limits.scratch_mb` holding the directory's files read-only:
    it may write there, and nothing it writes reaches the host's disk (for jobs whose results come on stdout).

    With `hold_stdin`, the command starts at once but gets its stdin only when `hold_stdin()` returns: a job
    can import its tools while something else finishes, and the wall timeout counts from the release. Bytes it
    returns are the job's stdin instead of `stdin` (kavi.sandbox.held: the job was not known at the start)."""
    prep = _prepare(argv, cwd=cwd, limits=limits, env_extra=env_extra, rw=rw, scratch=scratch)
    t0 = time.monotonic()
    out, errbuf = bytearray(), bytearray()
    timed_out = False
    try:
        proc = subprocess.Popen(
            prep.command,
            cwd=cwd,
            env=prep.env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=prep.pass_fds,
        )
        prep.after_spawn()
        threads = [threading.Thread(target=_drain, args=(proc.stdout, out), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, errbuf), daemon=True)]
        for t in threads:
            t.start()
        ended_early = False
        if hold_stdin is not None:
            held = hold_stdin()
            if isinstance(held, bytes):
                stdin = held
            ended_early = proc.poll() is not None
            t0 = time.monotonic()
        if stdin is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write(stdin)
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
        try:
            proc.wait(timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        # Whatever the outcome, nothing the command started may outlive it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if prep.cgroup is not None:
            prep.cgroup.kill_all()
        proc.wait()
        for t in threads:
            t.join(5)
    finally:
        prep.release()
    started = prep.started()
    rc = proc.returncode
    return SandboxResult(
        returncode=rc,
        stdout=out.decode("utf-8", "replace"),
        stderr=errbuf.decode("utf-8", "replace"),
        duration_s=time.monotonic() - t0,
        timed_out=timed_out,
        killed_by_signal=-rc if rc is not None and rc < 0 else None,
        isolation=prep.isolation,
        started=started,
        ended_before_release=ended_early,
    )


def _lower_autogroup(pid: int, niceness: int) -> None:
    """Set the niceness of `pid`'s session group (/proc/PID/autogroup, "/autogroup-N nice K") to `niceness` when it
    is lower; nothing where the kernel does not group by session or the file cannot be written."""
    path = f"/proc/{pid}/autogroup"
    try:
        current = int(Path(path).read_text().split()[-1])
        if current < niceness:
            Path(path).write_text(str(niceness))
    except (OSError, ValueError, IndexError):
        return


class SandboxedProcess:
    """A long-lived command in the gate sandbox, talked to over its stdin and stdout (its stderr is kept, bounded).
    `kill` ends it and everything it started, at once; `close` also frees its cgroup."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, limits: Limits,
                 env_extra: Mapping[str, str] | None = None, scratch: bool = True, probe: bool = True,
                 off_layers: Iterable[str] | None = None) -> None:
        """With `probe` false, the sandbox is built without first proving it can be (`jail.quick_problem` only):
        the caller notices a command that never starts and asks `jail.probe` why. `off_layers`: the layers switched
        off (None: as KAVI_SANDBOX_OFF says)."""
        self.off_layers = jail.switched_off(off_layers)
        self._prep = _prepare(argv, cwd=cwd, limits=limits, env_extra=env_extra, rw=(), scratch=scratch, probe=probe,
                              off_layers=self.off_layers)
        self.isolation = self._prep.isolation
        self.stderr = bytearray()
        try:
            self.proc = subprocess.Popen(self._prep.command, cwd=cwd, env=self._prep.env, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                         pass_fds=self._prep.pass_fds, bufsize=0)
        except BaseException:
            self._prep.release()
            raise
        self._prep.after_spawn()
        self._stderr_thread = threading.Thread(target=_drain, args=(self.proc.stderr, self.stderr), daemon=True)
        self._stderr_thread.start()
        self._closed = False
        self._lock = threading.Lock()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def lower_priority(self, niceness: int) -> int:
        """Give every thread of the command and of what it started the CPU niceness `niceness` (only ever lower a
        priority: a higher niceness), and the same to their sessions' scheduling groups where the kernel groups
        by session (autogroup): there a thread's niceness weighs it only against its own session, and the command
        runs in sessions of its own. Where a CPU cgroup can be made, its processes also move to one that runs only
        when nothing else wants the CPU (_PidsCgroup.make_idle). Returns how many threads were changed."""
        pids = {self.proc.pid, *(self._prep.cgroup.pids() if self._prep.cgroup is not None else ())}
        changed = 0
        seen: set[int] = set()
        todo = list(pids)
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
            except (OSError, ValueError):
                continue
            _lower_autogroup(pid, niceness)
            for tid in tids:
                with contextlib.suppress(OSError, ValueError):
                    todo.extend(int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split())
                with contextlib.suppress(OSError):
                    if os.getpriority(os.PRIO_PROCESS, tid) < niceness:
                        os.setpriority(os.PRIO_PROCESS, tid, niceness)
                        changed += 1
        if self._prep.cgroup is not None:
            self._prep.cgroup.make_idle()
        return changed

    def kill(self, *, wait: bool = True) -> None:
        """Kill the command's session and every process in its cgroup (safe to call more than once). Without
        `wait`, every process is sent SIGKILL at once and none is waited for (`close` waits for the cgroup to empty)."""
        if self.proc.returncode is None:  # never signal a process group whose leader was already reaped
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        if self._prep.cgroup is not None:
            if wait:
                self._prep.cgroup.kill_all()
            else:
                self._prep.cgroup.signal_all()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._stderr_thread.join(1)
        self._prep.release()
        with contextlib.suppress(OSError):
            if self._prep.marker_r is not None:
                os.close(self._prep.marker_r)
                self._prep.marker_r = None


def read_job_file(path: Path, limit: int = 4 * 1024 * 1024) -> bytes | None:
    """A file a sandboxed job could have replaced, read safely by the forge: never through a link, never a FIFO
    or device (which would block or lie), never more than `limit` bytes. None when it is not such a file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks, total = [], 0
        while chunk := os.read(fd, 65536):
            total += len(chunk)
            if total > limit:
                return None
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def fresh_dir(root: Path, name: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))
