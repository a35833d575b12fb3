"""Gate slots: at most N builds of this machine run their gates at once (KAVI_GATE_SLOTS, default: the CPUs this
process may use; 0: no limit), so concurrent runs' verifications take turns at full speed instead of sharing the
cores, and one run's gates fill the time another waits for its model.

How: the slots are lock files in a folder of this user's runtime directory (machine-local: workers of other machines
have their own cores and their own folder), mode 0700. A holder keeps an exclusive `flock` on one slot file; the
kernel releases it when the holder's process ends however it ends, so a killed run never keeps a slot. Waiters
queue on a second lock (every taker passes it, so none overtakes a waiter by finding a slot free first) and the
first in the queue tries the slots every few milliseconds. The descriptors are close-on-exec: a gate's sandboxed
process never inherits a slot.

Taking a slot within a slot (the same thread, a nested verification) does not wait: it is the same build's work.
"""

import errno
import fcntl
import logging
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kavi.settings import KaviSettings, read_setting

_POLL_S = 0.01
_log = logging.getLogger(__name__)
_held = threading.local()


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def gate_slots_setting(settings: KaviSettings | None = None) -> int:
    """KAVI_GATE_SLOTS of the settings (checked there: 0, no limit, to 256); unset, the CPUs this process may use.
    Without settings, the variable alone is read (through kavi.settings)."""
    value: int | None = settings.gate_slots if settings is not None else read_setting("gate_slots")
    return usable_cpus() if value is None else value


def default_folder(runtime_dir: str | None = None) -> Path:
    """`kavi-gate-slots-<uid>` in the runtime folder (XDG_RUNTIME_DIR) when it is an absolute path, else in the
    system's temp folder."""
    runtime = (read_setting("runtime_dir") if runtime_dir is None else runtime_dir).strip()
    base = Path(runtime) if runtime and os.path.isabs(runtime) and os.path.isdir(runtime) else \
        Path(tempfile.gettempdir())
    return base / f"kavi-gate-slots-{os.geteuid()}"


def _private_folder(folder: Path) -> Path | None:
    """The folder, created mode 0700 if missing; None (with a warning) when it is not a directory of this user that
    only this user can open — someone else's folder could hold every slot and stall the forge."""
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except OSError as err:
        _log.warning("gate slots: no limit, %s cannot be used: %s", folder, err)
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        _log.warning("gate slots: no limit, %s is not a private directory of this user (a symlink, someone else's, "
                     "or open to others)", folder)
        return None
    return folder


def _open_lock(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as err:
        if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise


@contextmanager
def gate_slot(count: int | None = None, folder: Path | None = None) -> Iterator[float]:
    """Hold one of `count` gate slots for the block (None: KAVI_GATE_SLOTS or the CPUs; 0: no limit); yields the
    seconds waited for it."""
    n = gate_slots_setting() if count is None else count
    if n <= 0 or getattr(_held, "depth", 0) > 0:
        _held.depth = getattr(_held, "depth", 0) + 1
        try:
            yield 0.0
        finally:
            _held.depth -= 1
        return
    where = _private_folder(folder or default_folder())
    if where is None:
        yield 0.0
        return
    t0 = time.monotonic()
    slot = _acquire(where, n)
    waited = time.monotonic() - t0
    _held.depth = 1
    try:
        yield waited
    finally:
        _held.depth = 0
        os.close(slot)  # closing the last descriptor releases the flock


def _acquire(where: Path, n: int) -> int:
    fds = [_open_lock(where / f"slot-{i}") for i in range(n)]
    got: int | None = None
    try:
        queue = _open_lock(where / "queue")
        try:
            # Everyone passes the waiting room, even when a slot is free: a newcomer never takes the slot a waiter
            # has waited for. Its holder alone polls the slots; it leaves the room with a slot.
            fcntl.flock(queue, fcntl.LOCK_EX)
            while True:
                got = _scan(fds)
                if got is not None:
                    return got
                time.sleep(_POLL_S)
        finally:
            os.close(queue)
    finally:
        for fd in fds:
            if fd != got:
                os.close(fd)


def _scan(fds: list[int]) -> int | None:
    start = os.getpid() % len(fds)  # different processes try different slots first
    for k in range(len(fds)):
        fd = fds[(start + k) % len(fds)]
        if _try_lock(fd):
            return fd
    return None
