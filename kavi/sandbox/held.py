"""Gate jobs started ahead of their work: one job's sandbox, built and running its interpreter while the build still
waits for its model, so that the verification finds the gate's tools imported.

A held job is exactly what `run_sandboxed` starts for that job (every layer, the same limits, a fresh interpreter
in a world built for it alone), started earlier: its command is the forge's own launcher, which imports the tool
and then waits on stdin. Until its job arrives it has run nothing but the forge's code. The job's files are
written into the job's directory in place (the placeholders the sandbox was built with, the same inodes), the job
goes to stdin, and the wall timeout counts from that release. A held job is used once; one not taken is released
with an empty job, on which the launcher exits without running anything.

Where the gate sandbox cannot be built here, nothing is held (the warm runner's jobs start in milliseconds).
"""

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from kavi.sandbox import jail
from kavi.sandbox.runner import Limits, SandboxResult, run_sandboxed
from kavi.sandbox.warm import run_warm

HELD_INTERPRETER = ("active: a fresh interpreter in a sandbox built for this job alone, started ahead of its job "
                    "(the tool imported while the build waited for its model; the job and its files came after)")


@dataclass(frozen=True)
class JobShape:
    """What a sandbox is built from; a held job serves only a job of exactly this shape."""

    argv: tuple[str, ...]
    cwd: Path
    limits: Limits
    env_extra: tuple[tuple[str, str], ...] = ()
    rw: tuple[Path, ...] = ()
    scratch: bool = False
    files: tuple[str, ...] = ()  # a scratch job's files: its mounts are made from them when the sandbox starts


def shape(argv: Sequence[str], *, cwd: Path, limits: Limits, env_extra: Mapping[str, str] | None = None,
          rw: Sequence[Path] = (), scratch: bool = False, files: Sequence[str] = ()) -> JobShape:
    return JobShape(tuple(argv), cwd, limits, tuple(sorted((env_extra or {}).items())), tuple(rw), scratch,
                    tuple(sorted(files)))


class HeldJob:
    """A job's sandbox, started now, waiting for its job on stdin (see the module docstring)."""

    def __init__(self, job: JobShape) -> None:
        self.job = job
        self._go = threading.Event()
        self._stdin = b""
        self._taken = False
        self._lock = threading.Lock()
        self._result: Future[SandboxResult] = Future()
        threading.Thread(target=self._run, name="kavi-held-job", daemon=True).start()

    def _hold(self) -> bytes:
        self._go.wait()
        return self._stdin

    def _run(self) -> None:
        try:
            res = run_sandboxed(list(self.job.argv), cwd=self.job.cwd, limits=self.job.limits,
                                env_extra=dict(self.job.env_extra), stdin=b"", rw=self.job.rw,
                                hold_stdin=self._hold, scratch=self.job.scratch)
            res.isolation["interpreter"] = HELD_INTERPRETER
            self._result.set_result(res)
        except BaseException as err:  # the caller hears of it when it takes the job
            self._result.set_exception(err)

    @property
    def ended(self) -> bool:
        """Its process is gone before its job came (it could not start, or was killed): not to be taken."""
        return self._result.done()

    def run(self, stdin: bytes) -> SandboxResult | None:
        """Release the job with `stdin` and wait for its end (once; a second call raises). None when the process had
        ended before the release (killed while it waited): it never saw the job, which must start afresh."""
        with self._lock:
            if self._taken:
                raise RuntimeError("a held job runs once")
            self._taken = True
        self._stdin = stdin
        self._go.set()
        res = self._result.result()
        return None if res.ended_before_release else res

    def ended_with(self, timeout: float) -> SandboxResult:
        """What its process ended with, once it has (a released or discarded job), waiting at most `timeout` s."""
        return self._result.result(timeout)

    def discard(self) -> None:
        """Release it with an empty job (its launcher exits at once); nothing waits for it."""
        with self._lock:
            if self._taken:
                return
            self._taken = True
        self._go.set()


def can_hold() -> bool:
    """Whether jobs can be held here: only in the gate sandbox (elsewhere a job forks from the warm runner, or
    starts a fresh interpreter, with nothing to gain)."""
    return jail.probe() is None


_lock = threading.Lock()
_held: dict[Path, HeldJob] = {}
MAX_HELD = 8  # of builds that never reached their verification: the oldest are released


def hold(job: JobShape) -> HeldJob | None:
    """Start `job` held, keyed by its directory; None where jobs cannot be held or one is held there already."""
    if not can_hold():
        return None
    with _lock:
        if job.cwd in _held:
            return None
        while len(_held) >= MAX_HELD:
            _held.pop(next(iter(_held))).discard()
        started = _held[job.cwd] = HeldJob(job)
    return started


def take(job: JobShape) -> HeldJob | None:
    """The job held for `job`'s directory when it has exactly `job`'s shape; one of another shape is released."""
    with _lock:
        held = _held.pop(job.cwd, None)
    if held is None:
        return None
    if held.job != job or held.ended:
        held.discard()
        return None
    return held


def run_job(job: JobShape, stdin: bytes) -> SandboxResult:
    """`job` with `stdin`: the job held for it when there is one whose process still waits, else a fresh start."""
    ahead = take(job)
    res = ahead.run(stdin) if ahead is not None else None
    if res is None:  # none held, or its process ended before the job came
        res = run_warm(list(job.argv), cwd=job.cwd, limits=job.limits, env_extra=dict(job.env_extra), stdin=stdin,
                       rw=job.rw, scratch=job.scratch)
    return res


def hand_over(cwd: Path) -> None:
    """Give the files written into a held job's folder to the user the job runs as, as `run_sandboxed` hands a
    folder over when it starts a job (the held job's start came before them)."""
    jail.hand_over([cwd], jail.job_owner())


def holds(cwd: Path) -> bool:
    """Whether a job is held in `cwd`: its files go into the folder as it is, in place."""
    with _lock:
        return cwd in _held


def release_under(root: Path) -> None:
    """Release every job held in a directory under `root` (their build will not be verified here)."""
    with _lock:
        gone = [k for k in _held if k.is_relative_to(root)]
        jobs = [_held.pop(k) for k in gone]
    for j in jobs:
        j.discard()
