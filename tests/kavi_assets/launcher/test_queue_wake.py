"""The run queue of the daemon `kavi forge --all` starts takes a freed slot when a run worker ends, not at
its next timer tick (kavi_assets/launcher/wake.py, kavi_assets/launcher/daemon.py)."""

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, cast

import pytest
from dagster._daemon import controller
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

from kavi_assets.launcher import daemon
from kavi_assets.launcher.wake import RunEnds

pytestmark = pytest.mark.skipif(not RunEnds.available(), reason="no pidfds on this system: the queue keeps its timer")


def _sleeper() -> "subprocess.Popen[bytes]":
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_the_end_of_a_watched_process_is_seen_whoever_reaps_it() -> None:
    ends = RunEnds()
    first, second = _sleeper(), _sleeper()
    try:
        assert ends.watch(first.pid) and ends.watch(second.pid)
        assert not ends.ended.wait(0.3)  # both alive: nothing to say
        first.kill()
        assert ends.ended.wait(10)
        ends.ended.clear()
        second.kill()
        assert ends.ended.wait(10)  # a second end, after the watcher took the first
    finally:
        for proc in (first, second):
            proc.kill()
            proc.wait()


def test_a_process_that_has_already_ended_counts_as_ended() -> None:
    ends = RunEnds()
    gone = _sleeper()
    gone.kill()
    gone.wait()  # reaped: the pid names no process
    assert ends.watch(gone.pid)
    assert ends.ended.is_set()


def _drive(gen: Iterator[Any], until: Any, limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    while not until():
        assert time.monotonic() < deadline, "the daemon's loop did not get there"
        next(gen)


def test_the_queue_daemon_passes_again_when_a_run_ends_and_on_its_timer_otherwise() -> None:
    ends = RunEnds()
    passes: list[float] = []

    def run_iteration(_context: Any) -> Iterator[None]:
        passes.append(time.monotonic())
        yield None

    shutdown = threading.Event()
    woken = daemon.WokenQueuedRunCoordinatorDaemon(30, ends)
    woken.run_iteration = run_iteration  # type: ignore[method-assign,assignment]
    gen = woken.core_loop(None, shutdown)
    _drive(gen, lambda: len(passes) == 1, 10)
    threading.Timer(0.2, ends.ended.set).start()
    _drive(gen, lambda: len(passes) == 2, 10)  # a run's end: the next pass, long before the 30 s timer
    assert passes[1] - passes[0] < 10
    quick = daemon.WokenQueuedRunCoordinatorDaemon(1, RunEnds())
    quick.run_iteration = run_iteration  # type: ignore[method-assign,assignment]
    passes.clear()
    gen = quick.core_loop(None, shutdown)
    _drive(gen, lambda: len(passes) == 2, 10)  # no run ended: Dagster's interval still brings the next pass
    assert passes[1] - passes[0] >= 1.0
    shutdown.set()
    gen.close()


def test_the_batch_daemon_builds_the_woken_queue_daemon_and_dagster_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(controller, "create_daemon_of_type", controller.create_daemon_of_type)  # undone after
    daemon.install()

    class Coordinator:
        dequeue_interval_seconds = 1

    class Instance:
        run_coordinator = Coordinator()

    made = controller.create_daemon_of_type(QueuedRunCoordinatorDaemon.daemon_type(), cast(Any, Instance()))
    assert isinstance(made, daemon.WokenQueuedRunCoordinatorDaemon) and made.interval_seconds == 1
    assert controller.create_daemons_from_instance.__globals__["create_daemon_of_type"] is \
        controller.create_daemon_of_type  # the name Dagster's controller calls is the one installed
