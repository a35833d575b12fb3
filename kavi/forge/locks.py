"""One attempt of a proposal at a time: an advisory file lock per proposal name under the home.

The lock is fcntl's `flock` on `<home>/locks/<name>.lock`: the kernel releases it when the holding process dies,
however it dies, so a killed forge never leaves a proposal locked. Within a process the lock is re-entrant for
the thread that holds it (the CLI takes it before it starts a run, and the run takes it again around the
attempt); another thread waits as another process would. The holder writes its pid, host and run id into the
file, so a caller that cannot wait is told who is forging.
"""

import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kavi.home import KaviHome
from kavi.process_owner import ProcessOwner
from kavi.settings import read_setting

WAIT_ENV = "KAVI_FORGE_WAIT_S"
DEFAULT_WAIT_S = 600.0
_POLL_S = 0.2


class ProposalBusy(RuntimeError):
    """Another process (or thread) is forging this proposal; the message says who."""

    def __init__(self, name: str, holder: dict[str, Any] | None) -> None:
        self.name = name
        self.holder = holder or {}
        pid = self.holder.get("pid", "?")
        run = self.holder.get("run_id") or "run not started yet"
        run = run if run.startswith("run ") else f"run {run}"
        self._who = f"{name} is being forged by pid {pid} ({run})"
        super().__init__(f"{self._who}; try again when it finishes")

    def waiting_message(self) -> str:
        """Who holds the proposal, without the advice to try again (for a caller that keeps waiting)."""
        return self._who


def default_wait_s() -> float:
    """KAVI_FORGE_WAIT_S, read by kavi.settings (callers that hold the settings pass `wait_s`)."""
    value: float = read_setting("forge_wait_s")
    return value


def lock_path(home: KaviHome, name: str) -> Path:
    return home.inside(home.root / "locks" / f"{name}.lock")


@dataclass
class _Held:
    fd: int
    thread: int
    depth: int


_held: dict[str, _Held] = {}
_mutex = threading.Lock()


def _write_holder(fd: int, name: str, run_id: str | None) -> None:
    owner = ProcessOwner.current()
    doc = {"proposal": name, "pid": owner.pid, "host": owner.host, "pid_start": owner.start, "run_id": run_id,
           "since": datetime.now(UTC).isoformat()}
    data = json.dumps(doc).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def read_holder(path: Path) -> dict[str, Any] | None:
    """Who holds (or last held) the lock, as its holder wrote it; None when unknown."""
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _try_acquire(path: Path, name: str, run_id: str | None) -> bool:
    key = str(path)
    me = threading.get_ident()
    with _mutex:
        held = _held.get(key)
        if held is not None:
            if held.thread != me:
                return False
            held.depth += 1
            if run_id:
                _write_holder(held.fd, name, run_id)
            return True
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        _held[key] = _Held(fd, me, 1)
        _write_holder(fd, name, run_id)
        return True


def _release(path: Path) -> None:
    key = str(path)
    with _mutex:
        held = _held[key]
        held.depth -= 1
        if held.depth > 0:
            return
        del _held[key]
        try:
            os.ftruncate(held.fd, 0)
            fcntl.flock(held.fd, fcntl.LOCK_UN)
        finally:
            os.close(held.fd)


@contextmanager
def attempt_lock(home: KaviHome, name: str, *, run_id: str | None = None, wait_s: float | None = None,
                 on_wait: Any = None) -> Iterator[None]:
    """Hold NAME's attempt lock for the block; wait at most `wait_s` (default $KAVI_FORGE_WAIT_S, else 600 s)
    for another holder to finish, then raise ProposalBusy naming it. `on_wait(busy)` is called once on waiting."""
    path = lock_path(home, name)
    limit = default_wait_s() if wait_s is None else max(0.0, wait_s)
    deadline = time.monotonic() + limit
    told = False
    while not _try_acquire(path, name, run_id):
        busy = ProposalBusy(name, read_holder(path))
        if time.monotonic() >= deadline:
            raise busy
        if not told and on_wait is not None:
            on_wait(busy)
            told = True
        time.sleep(min(_POLL_S, max(0.0, deadline - time.monotonic())))
    try:
        yield
    finally:
        _release(path)


def is_free(home: KaviHome, name: str) -> bool:
    """True when nobody (no other process, no other thread) holds NAME's attempt lock right now."""
    try:
        with attempt_lock(home, name, wait_s=0):
            return True
    except ProposalBusy:
        return False
