"""`python -m kavi_assets.launcher.daemon run ...`: Dagster's own `dagster-daemon` command, with a run queue woken
by run ends and a quicker exit.

The run queue: Dagster's queued-run coordinator daemon dequeues on a timer (at least a second between passes). Here
it is `WokenQueuedRunCoordinatorDaemon`: the same daemon, whose wait between passes also ends as soon as a run
worker this process launched exits (kavi_assets/launcher/wake.py), so a freed slot takes the next queued run at
once. Every pass is still Dagster's own (its limits, its order), at least one per `dequeue_interval_seconds`. It is
installed where Dagster's daemon controller makes the queued-run daemon, for this process only.

The exit: the daemon a batch starts (`kavi forge --all`, `kavi demo --concurrency N`) is stopped when the batch's
last run has ended, and the command waits for it. Its daemon threads stop within milliseconds of SIGTERM, but the
interpreter's exit then walks everything the daemon loaded (Dagster, the workspace, gRPC) with its final garbage
collections, a wait added to a batch's wall time after its last run (README, "Forging many at once"). As `kavi` does
(kavi_assets/cli/main.py), one collection runs the finalizers of unreachable cycles as an ordinary exit would, and
the objects still alive are frozen so that the exit's own collections skip them. The daemon's instance, workspace
and code servers have been shut down by Dagster's own context managers before this runs.
"""

import gc
import sys
import threading
import time
from typing import Any

from dagster._daemon import controller
from dagster._daemon.daemon import DaemonIterator, SpanMarker
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon
from dagster._utils.error import serializable_error_info_from_exc_info

from kavi_assets.launcher.host import HANDED_OPTION, PRESTART_OPTION
from kavi_assets.launcher.prefork import hand_over
from kavi_assets.launcher.wake import RUN_ENDS, RunEnds

_WAIT_SLICE_S = 0.5  # as Dagster's own wait: the heartbeat and the shutdown are looked at least this often


class WokenQueuedRunCoordinatorDaemon(QueuedRunCoordinatorDaemon):
    """Dagster's queued-run coordinator daemon, whose wait between passes also ends when a run worker ends."""

    def __init__(self, interval_seconds: float, ends: RunEnds = RUN_ENDS) -> None:
        super().__init__(interval_seconds)
        self._ends = ends

    def core_loop(self, workspace_process_context: Any, shutdown_event: threading.Event) -> DaemonIterator:
        # Dagster's IntervalDaemon.core_loop, but for the wait.
        while True:
            start = time.monotonic()
            self._ends.ended.clear()  # this pass sees every run that has ended so far
            yield SpanMarker.START_SPAN
            try:
                yield from self.run_iteration(workspace_process_context)
            except Exception:
                error_info = serializable_error_info_from_exc_info(sys.exc_info())
                self._logger.error("Caught error:\n%s", error_info)
                yield error_info
            yield SpanMarker.END_SPAN
            while not shutdown_event.is_set():
                left = self.interval_seconds - (time.monotonic() - start)
                if left <= 0 or self._ends.ended.wait(min(left, _WAIT_SLICE_S)):
                    break
                yield None
            yield None


def install() -> None:
    """Make Dagster's daemon controller, in this process, build the woken queue daemon instead of its own."""
    dagsters = controller.create_daemon_of_type

    def create_daemon_of_type(daemon_type: str, instance: Any) -> Any:
        if daemon_type == QueuedRunCoordinatorDaemon.daemon_type():
            return WokenQueuedRunCoordinatorDaemon(instance.run_coordinator.dequeue_interval_seconds)
        return dagsters(daemon_type, instance)

    controller.create_daemon_of_type = create_daemon_of_type


def take_batch_options(args: list[str]) -> list[str]:
    """The run host options `kavi forge --all` puts first (kavi_assets/launcher/host.py) go to this process's
    launcher; the arguments after them are Dagster's."""
    handed, prestart = "", False
    while args and args[0] in (PRESTART_OPTION, HANDED_OPTION):
        if args[0] == PRESTART_OPTION:
            prestart, args = True, args[1:]
        else:
            handed, args = (args[1] if len(args) > 1 else ""), args[2:]
    hand_over(handed, prestart)
    return args


def main() -> None:
    from dagster._daemon.cli import main as dagster_daemon  # the `dagster-daemon` console script

    sys.argv[1:] = take_batch_options(sys.argv[1:])
    install()
    try:
        dagster_daemon()
    finally:
        gc.collect()
        gc.freeze()


if __name__ == "__main__":
    main()
