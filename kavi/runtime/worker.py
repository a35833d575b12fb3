"""Contained execution: each call of a trusted skill runs in a fresh sandboxed worker, under a deadline.

A worker is `kavi.runtime.worker_main` started in the gate sandbox (bubblewrap, seccomp, no network, no host
filesystem beyond a private tmp, memory and process limits). The forge hands it the skill's hash-checked bytes and
the input; the skill's handles are proxies, and every effect (a vault read or write, a fetch, a secret, a model
call) is performed here, by the `Broker`, under the skill's class. At the deadline the worker's whole process tree
is killed. A worker runs one call and is thrown away; a `WorkerPool` keeps some started ahead of need.
"""

import atexit
import base64
import contextlib
import functools
import json
import os
import queue
import select
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kavi.sandbox import jail
from kavi.sandbox.runner import Limits, SandboxedProcess, fresh_dir

if TYPE_CHECKING:  # the broker (and the skills' vocabulary it imports) is not needed to start a worker
    from kavi.runtime.broker import Broker

MAX_MESSAGE = 64 * 1024 * 1024
START_TIMEOUT_S = 30.0
DEFAULT_WARM = 2
# A call that has computed this long (far beyond a quick call) yields the CPU to shorter ones (another client's
# call, the server itself): its worker's threads get this niceness. Its deadline is unchanged.
YIELD_AFTER_S = 0.25
YIELD_NICENESS = 10
WORKER_LIMITS = Limits(wall_s=3600.0, cpu_s=3600, address_space_mb=2048, file_size_mb=16, max_processes=32,
                       scratch_mb=64)


class WorkerError(RuntimeError):
    """The worker could not be started, or broke the protocol (its stderr's last line says why, when it said)."""


class _DeadlinePassed(Exception):
    """The deadline passed while the forge was writing to a worker that does not read."""


class WorkerNotStarted(WorkerError):
    """The worker ended, or said nothing, before it was ready (a sandbox that cannot be built here ends so)."""


@dataclass
class Outcome:
    """How a contained call ended: `output` (JSON text) on success, else `error` and its `kind` (`failure`,
    `schema`, `load`, `tampered` or `timeout`)."""

    output: str | None = None
    error: str | None = None
    kind: str | None = None
    effects: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


def sandbox_problem(*, quick: bool = False) -> str | None:
    """Why no worker sandbox can be built here, or None. `quick`: only what can be seen without building one (a
    worker that then never starts is explained by the full probe)."""
    return jail.quick_problem() if quick else jail.probe()


@functools.cache
def _spawner() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="kavi-worker-spawner")


def _tmp_root() -> Path:
    return Path(tempfile.gettempdir()) / f"kavi-workers-{os.getuid()}"


class Worker:
    """One started worker, waiting for its one request."""

    def __init__(self, off_layers: frozenset[str] | None = None) -> None:
        """`off_layers`: the sandbox layers switched off (None: as the settings say)."""
        self.cwd = fresh_dir(_tmp_root(), "w")
        argv = [sys.executable, "-I", "-m", "kavi.runtime.worker_main"]
        # Started from one long-lived thread: bubblewrap's --die-with-parent fires when the *thread* that started
        # it ends, so a worker started from a short-lived thread would be killed with it.
        self.process = _spawner().submit(SandboxedProcess, argv, cwd=self.cwd, limits=WORKER_LIMITS,
                                         scratch=True, probe=False, off_layers=off_layers).result()
        self._buffer = b""
        self._ready = False
        self.started_at = time.monotonic()
        self.used = False

    @property
    def isolation(self) -> dict[str, str]:
        return self.process.isolation

    def alive(self) -> bool:
        return self.process.proc.poll() is None

    def _read(self, deadline: float | None) -> dict[str, Any] | None:
        """The next message, or None at the deadline; WorkerError when the worker ended or spoke out of protocol."""
        out = self.process.proc.stdout
        assert out is not None
        fd = out.fileno()
        while b"\n" not in self._buffer:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise WorkerError(self._why_ended())
            self._buffer += chunk
            if len(self._buffer) > MAX_MESSAGE:
                raise WorkerError(f"the worker sent a message over {MAX_MESSAGE} bytes")
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            raise WorkerError("the worker sent a line that is not JSON") from None
        if not isinstance(message, dict):
            raise WorkerError("the worker sent a message that is not an object")
        return message

    def _why_ended(self) -> str:
        with contextlib.suppress(Exception):
            self.process.proc.wait(timeout=2)
        tail = bytes(self.process.stderr).decode("utf-8", "replace").strip().splitlines()
        code = self.process.proc.returncode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        return f"the worker ended ({how})" + (f": {tail[-1][:300]}" if tail else "")

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        if self._ready:
            return
        try:
            message = self._read(time.monotonic() + timeout_s)
        except WorkerError as exc:
            self.close()
            raise WorkerNotStarted(str(exc)) from None
        if message is None:
            self.close()
            raise WorkerNotStarted(f"the worker did not start within {timeout_s:.0f}s")
        if "ready" not in message:
            self.close()
            raise WorkerNotStarted("the worker did not say it was ready")
        self._ready = True

    def _send(self, message: Mapping[str, Any], deadline: float | None = None) -> None:
        """Write one message; a worker that stops reading cannot hold the forge past the deadline."""
        stdin = self.process.proc.stdin
        assert stdin is not None
        fd = stdin.fileno()
        os.set_blocking(fd, False)
        view = memoryview(json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode() + b"\n")
        while view:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                raise _DeadlinePassed
            _, writable, _ = select.select([], [fd], [], wait)
            if not writable:
                continue
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
            except OSError:
                raise WorkerError(self._why_ended()) from None

    def request(self, message: Mapping[str, Any], *, deadline_s: float | None,
                serve: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                cancelled: threading.Event | None = None) -> dict[str, Any] | None:
        """Send one request and serve its `call`s until `done`: the done body, or None when the deadline passed or
        the call was cancelled (the worker is then killed)."""
        self.used = True
        self.wait_ready()
        deadline = None if deadline_s is None else time.monotonic() + deadline_s
        yield_at: float | None = time.monotonic() + YIELD_AFTER_S
        try:
            self._send(message, deadline)
            while True:
                step = deadline
                if cancelled is not None:
                    # wake up now and then to notice a cancellation
                    soon = time.monotonic() + 0.05
                    step = soon if deadline is None else min(deadline, soon)
                if yield_at is not None:
                    if time.monotonic() >= yield_at:
                        self.process.lower_priority(YIELD_NICENESS)  # a long call yields to short ones
                        yield_at = None
                    else:
                        step = yield_at if step is None else min(step, yield_at)
                reply = self._read(step)
                if reply is None:
                    if cancelled is not None and cancelled.is_set():
                        return None
                    if deadline is not None and time.monotonic() >= deadline:
                        return None
                    continue
                if "done" in reply:
                    done = reply["done"]
                    if not isinstance(done, dict):
                        raise WorkerError("the worker's answer is not an object")
                    return done
                if "call" in reply and serve is not None:
                    self._send(serve(reply), deadline)
                    continue
                raise WorkerError("the worker sent a message the forge did not expect")
        except _DeadlinePassed:
            return None
        finally:
            self.close()

    def close(self) -> None:
        """Kill the worker and everything it started now: SIGKILL to its session and to every process of its cgroup,
        even one that left the session, so none of them runs another instruction of its own. Waiting for them to be
        gone, and removing the cgroup and the folder, is the reaper's work, off the caller's path."""
        self.process.kill(wait=False)
        _reaper.put(self)

    def reap(self) -> None:
        self.process.close()
        shutil.rmtree(self.cwd, ignore_errors=True)


class _Reaper:
    """Waits for killed workers and frees what they held, in one background thread; drained at exit."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Worker | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pending = 0

    def put(self, worker: Worker) -> None:
        with self._lock:
            if getattr(worker, "_queued", False):
                return
            worker._queued = True  # type: ignore[attr-defined]
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kavi-worker-reaper", daemon=True)
                self._thread.start()
                atexit.register(self.drain)
        self._queue.put(worker)

    def _run(self) -> None:
        while True:
            worker = self._queue.get()
            if worker is None:
                return
            try:
                worker.reap()
            except Exception:  # a worker that cannot be reaped is left to the kernel (it is killed already)
                pass
            finally:
                with self._lock:
                    self._pending -= 1

    def drain(self, timeout_s: float = 10.0) -> None:
        """Wait until every killed worker is reaped (at exit: no cgroup or folder is left behind)."""
        end = time.monotonic() + timeout_s
        while self._pending and time.monotonic() < end:
            time.sleep(0.01)


_reaper = _Reaper()


class WorkerPool:
    """Workers started ahead of need: `take` hands one out (starting one if none is waiting) and starts its
    replacement in the background. At most `size` calls run at once; past that `take` raises PoolBusy."""

    def __init__(self, size: int, *, warm: int | None = None, refill: bool = True,
                 assume_off: frozenset[str] | None = None) -> None:
        """`assume_off`: start the workers with these sandbox layers switched off before the settings are read (a
        command starting its worker first); `take` checks the assumption against the settings and replaces a
        worker built on a wrong one."""
        self.size = max(1, size)
        self._assumed_off = assume_off
        # Two waiting workers cover an agent's calls one after another and a second client's; more would cost a
        # sandboxed interpreter each while idle.
        self.warm = min(self.size, DEFAULT_WARM) if warm is None else max(0, min(warm, self.size))
        self.refill = refill  # False: the workers started at first are all there will be (a one-call process)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._idle: list[Worker] = []
        self._starting = 0
        self._busy = 0
        self._closed = False
        # Workers left waiting when the process ends are killed, their cgroups and folders removed.
        atexit.register(self.close)
        for _ in range(self.warm):
            self._start_one(first=True)

    def _start_one(self, *, first: bool = False) -> None:
        with self._lock:
            if self._closed or len(self._idle) + self._starting >= self.warm or not (first or self.refill):
                return
            self._starting += 1

        def start() -> None:
            worker: Worker | None = None
            try:
                worker = Worker(self._assumed_off)
                worker.wait_ready()
            except Exception:
                worker = None
            with self._lock:
                self._starting -= 1
                self._changed.notify_all()
                if worker is not None and not self._closed:
                    self._idle.append(worker)
                    return
            if worker is not None:
                worker.close()

        threading.Thread(target=start, name="kavi-worker-start", daemon=True).start()

    def take(self) -> Worker:
        with self._lock:
            if self._closed:
                raise WorkerError("the worker pool is closed")
            if self._busy >= self.size:
                raise PoolBusy(f"all {self.size} workers are busy; retry shortly")
            self._busy += 1
            worker = None
            end = time.monotonic() + START_TIMEOUT_S
            while worker is None:
                while self._idle:
                    candidate = self._idle.pop(0)
                    if candidate.alive() and self._as_configured(candidate):
                        worker = candidate
                        break
                    candidate.close()
                # A worker already starting is sooner than a new one: wait for it rather than start a second.
                if worker is not None or not self._starting or time.monotonic() > end:
                    break
                self._changed.wait(0.05)
        self._start_one()  # its replacement starts now, ready sooner for the next call
        if worker is None:
            try:
                worker = Worker()
            except BaseException:
                self.give_back()
                raise
        return worker

    def _as_configured(self, worker: Worker) -> bool:
        """Whether `worker` has the sandbox layers the settings ask for (always, unless the pool assumed them)."""
        if self._assumed_off is None:
            return True
        if worker.process.off_layers == jail.switched_off():
            return True
        self._assumed_off = None  # the settings say otherwise: every later worker follows them
        return False

    def give_back(self, *, refill: bool = True) -> None:
        """A call taken from the pool has ended (its worker is spent). Without `refill` its replacement waits for
        `replenish()`: the caller starts it once the call's record is written, so the replacement's start does not
        take the CPU from the end of the call."""
        with self._lock:
            self._busy = max(0, self._busy - 1)
        if refill:
            self._start_one()

    def replenish(self) -> None:
        """Start the workers the pool is short of (see give_back)."""
        self._start_one()

    @property
    def busy(self) -> int:
        return self._busy

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()
        # A worker still starting closes itself when it sees the pool closed; give it the time to.
        end = time.monotonic() + 3.0
        while self._starting and time.monotonic() < end:
            time.sleep(0.01)
        _reaper.drain()
        with contextlib.suppress(Exception):
            atexit.unregister(self.close)


class PoolBusy(WorkerError):
    """Every worker of the pool is running a call."""


_one_call: WorkerPool | None = None


def one_call_pool() -> WorkerPool:
    """The pool of a process that makes one call (`kavi run`): one worker, no replacement, started by the first
    caller. The command starts it before it imports the rest, so the worker starts beside those imports."""
    global _one_call
    if _one_call is None:
        # Started before the command reads its settings: with every layer, as KAVI_SANDBOX_OFF (a containment
        # test's setting) almost always leaves it; `take` replaces the worker when that setting says otherwise.
        _one_call = WorkerPool(1, warm=1, refill=False, assume_off=frozenset())
    return _one_call


def encode_source(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def run_contained(worker: Worker, *, name: str, data: bytes, digest: str, side_effect_class: str,
                  input_data: Mapping[str, Any], broker: "Broker", deadline_s: float,
                  cancelled: threading.Event | None = None) -> Outcome:
    """Run one call in `worker` (spent afterwards): the skill's bytes, its input and its grants go in; effects are
    served by `broker`; past `deadline_s` the worker is killed and the outcome is a timeout."""
    request = {"op": "run", "name": name, "source": encode_source(data), "digest": digest,
               "side_effect_class": side_effect_class, "input": dict(input_data), "handles": broker.grants(),
               "shown": f"{name} (sha256 {digest[:12]})"}
    try:
        done = worker.request(request, deadline_s=deadline_s, serve=broker.serve, cancelled=cancelled)
    except WorkerNotStarted as exc:
        return Outcome(error=f"WorkerError: {exc}", kind="unstarted", effects=broker.effects)
    except WorkerError as exc:
        return Outcome(error=f"WorkerError: {exc}", kind="failure", effects=broker.effects)
    if done is None:
        if cancelled is not None and cancelled.is_set():
            return Outcome(error="Cancelled: the caller went away; the worker was killed", kind="cancelled",
                           effects=broker.effects)
        return Outcome(error=f"Timeout: the call passed its deadline of {deadline_s:g}s; its worker and every "
                       "process it started were killed", kind="timeout", effects=broker.effects)
    output = done.get("output")
    if isinstance(output, str):
        try:
            parsed = json.loads(output)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            return Outcome(error="OutputValidationError: the worker's output is not a JSON object", kind="failure",
                           effects=broker.effects)
        return Outcome(output=output, effects=broker.effects)
    return Outcome(error=str(done.get("error") or "the worker gave no result"), kind=str(done.get("kind") or
                   "failure"), effects=broker.effects)


def describe_contained(skills: list[tuple[str, bytes, str, str]], *, timeout_s: float = 60.0) -> list[dict[str, Any]]:
    """Load each (name, bytes, digest, class) in one worker and return what it says of each (class, description and
    schemas, or an error): how skills are described without running their code in the forge's process."""
    if not skills:
        return []
    worker = Worker()
    request = {"op": "describe", "skills": [
        {"name": n, "source": encode_source(d), "digest": h, "side_effect_class": c, "shown": f"{n} (sha256 {h[:12]})"}
        for n, d, h, c in skills]}
    done = worker.request(request, deadline_s=timeout_s)
    if done is None:
        raise WorkerError(f"describing {len(skills)} skills took longer than {timeout_s:g}s")
    found = done.get("skills")
    if not isinstance(found, list) or len(found) != len(skills):
        raise WorkerError("the worker's description does not match the skills it was given")
    return [d if isinstance(d, dict) else {"error": "not described"} for d in found]
