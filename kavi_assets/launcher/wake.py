"""Run ends, seen as they happen: what wakes the run queue of the daemon `kavi forge --all` starts.

Dagster's queued-run coordinator daemon dequeues on a timer: `dequeue_interval_seconds` (a whole number, at least
1 s) after the start of its previous pass, checked every half second. A slot that a run frees waits for that timer
(README, "Forging many at once", has the figures of benchmarks/forge_parallel.py).

The run launcher (kavi_assets/launcher/prefork.py) lives in the daemon's process and knows each run worker's pid. It
hands every worker to `RUN_ENDS.watch`, which holds a pidfd for it (Linux: a descriptor that becomes readable when
that process exits, whoever its parent is) and sets `RUN_ENDS.ended` when any of them ends. The daemon `kavi forge
--all` starts (kavi_assets/launcher/daemon.py) runs Dagster's queued-run coordinator with one change: its wait
between passes also ends on that event, so the next pass (Dagster's own, with its limits) follows a run's end within
milliseconds. A daemon started otherwise (`dagster dev`, `dagster-daemon run`) dequeues on Dagster's timer alone, as
does this one where pidfds do not exist.
"""

import contextlib
import logging
import os
import select
import threading

_log = logging.getLogger("kavi.launcher")
_POLL_MS = 1000  # the watcher's own wake-up, to take newly watched pids (a pipe wakes it sooner)


class RunEnds:
    """Sets `ended` when a watched process exits (one thread per process holding it, started on first use)."""

    def __init__(self) -> None:
        self.ended = threading.Event()
        self._lock = threading.Lock()
        self._pending: list[int] = []
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = -1, -1

    @staticmethod
    def available() -> bool:
        return hasattr(os, "pidfd_open")

    def watch(self, pid: int) -> bool:
        """Watch `pid`; False where pidfds do not exist (nothing will be signalled for it)."""
        if not self.available():
            return False
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            self.ended.set()  # it has ended already
            return True
        except OSError as err:
            _log.debug("cannot watch run worker %s: %s", pid, err)
            return False
        with self._lock:
            self._pending.append(fd)
            if self._thread is None or not self._thread.is_alive():
                self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
                self._thread = threading.Thread(target=self._watch, name="kavi-run-ends", daemon=True)
                self._thread.start()
            else:
                with contextlib.suppress(OSError):  # a full pipe: the watcher is awake anyway
                    os.write(self._wake_w, b"x")
        return True

    def _watch(self) -> None:
        poller = select.poll()
        poller.register(self._wake_r, select.POLLIN)
        while True:
            with self._lock:
                for fd in self._pending:
                    poller.register(fd, select.POLLIN)
                self._pending.clear()
            for fd, _ in poller.poll(_POLL_MS):
                if fd == self._wake_r:
                    with contextlib.suppress(OSError):
                        os.read(self._wake_r, 4096)
                    continue
                poller.unregister(fd)
                os.close(fd)
                self.ended.set()


RUN_ENDS = RunEnds()
