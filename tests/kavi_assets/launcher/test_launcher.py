"""The run launcher that forks each forge run worker from a preloaded host (kavi_assets/launcher).

`tests/kavi_assets/cli/test_forge_all.py` shows whole batches executed by forked workers; these tests pin the launcher's
own promises: which runs it forks, its worker health check for the run monitor, termination, and a host that never
runs stale code."""

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance, DagsterRunStatus
from dagster._core.code_pointer import ModuleCodePointer
from dagster._core.launcher.base import WorkerStatus
from dagster._core.origin import JobPythonOrigin, RepositoryPythonOrigin
from dagster._core.storage.dagster_run import DagsterRun

from kavi.process_owner import ProcessOwner
from kavi_assets.launcher import PreforkRunLauncher, prefork
from kavi_assets.launcher.host import code_stamp, forge_modules


@pytest.fixture()
def launcher(tmp_path: Path) -> Iterator[PreforkRunLauncher]:
    inst = DagsterInstance.ephemeral(tempdir=str(tmp_path))
    ours = PreforkRunLauncher()
    ours.register_instance(inst)
    try:
        yield ours
    finally:
        ours.dispose()
        inst.dispose()


def _origin(module: str, executable: str = sys.executable) -> JobPythonOrigin:
    pointer = ModuleCodePointer(module, "defs", working_directory=None)
    return JobPythonOrigin("forge", RepositoryPythonOrigin(executable, pointer))


def _run(launcher: PreforkRunLauncher, status: DagsterRunStatus, tags: dict[str, str]) -> DagsterRun:
    run = DagsterRun(job_name="forge", run_id=str(uuid.uuid4()), status=status, tags=tags)
    return launcher._instance.add_run(run)


def _sleeper() -> "subprocess.Popen[bytes]":
    # SIGTERM's default action restored: a shell may have started this test run with it ignored, and a child
    # inherits that (a real run worker installs Dagster's own handler).
    # It says so once the default is back: a SIGTERM sent before that would be discarded.
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_DFL); print('ready', flush=True); " \
           "time.sleep(120)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _worker_tags(pid: int) -> dict[str, str]:
    owner = ProcessOwner.current() if pid == os.getpid() else ProcessOwner(pid, ProcessOwner.current().host,
                                                                             prefork.process_start(pid))
    return {**owner.tags(), prefork.WORKER_TAG: "prefork"}


def test_only_runs_of_the_forge_location_on_this_python_are_forked() -> None:
    def run(origin: JobPythonOrigin | None) -> DagsterRun:
        return DagsterRun(job_name="forge", run_id="r", job_code_origin=origin)

    assert PreforkRunLauncher.forks(run(_origin("kavi_assets.queue_definitions")))
    assert PreforkRunLauncher.forks(run(_origin("kavi_assets.definitions")))
    # `python` and `python3.11` of this environment are the same interpreter.
    twin = Path(sys.executable).with_name(f"python{sys.version_info.major}.{sys.version_info.minor}")
    if twin.exists():
        assert PreforkRunLauncher.forks(run(_origin("kavi_assets.definitions", str(twin))))
    assert not PreforkRunLauncher.forks(run(_origin("someone_elses.definitions")))
    assert not PreforkRunLauncher.forks(run(_origin("kavi_assets.definitions", "/nonexistent/python")))
    assert not PreforkRunLauncher.forks(run(None))


def test_worker_health_follows_the_forked_process(launcher: PreforkRunLauncher) -> None:
    proc = _sleeper()
    try:
        run = _run(launcher, DagsterRunStatus.STARTED, _worker_tags(proc.pid))
        health = launcher.check_run_worker_health(run)
        assert health.status == WorkerStatus.RUNNING and health.run_worker_id == str(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    health = launcher.check_run_worker_health(run)
    assert health.status == WorkerStatus.FAILED
    assert f"pid {proc.pid}" in str(health.msg) and "exited before the run ended" in str(health.msg)
    # A worker that is gone after its run ended did its job.
    done = _run(launcher, DagsterRunStatus.SUCCESS, _worker_tags(proc.pid))
    assert launcher.check_run_worker_health(done).status == WorkerStatus.SUCCESS
    # A run this launcher did not fork is not judged by it; one on another machine cannot be.
    assert launcher.check_run_worker_health(_run(launcher, DagsterRunStatus.STARTED, {})).status \
        == WorkerStatus.UNKNOWN
    elsewhere = {**_worker_tags(os.getpid()), "kavi/host": "another-machine"}
    assert launcher.check_run_worker_health(_run(launcher, DagsterRunStatus.STARTED, elsewhere)).status \
        == WorkerStatus.UNKNOWN


def test_a_reused_pid_is_not_taken_for_the_worker(launcher: PreforkRunLauncher) -> None:
    tags = {**_worker_tags(os.getpid()), "kavi/pid_start": "1"}  # this pid, but a process started at another time
    run = _run(launcher, DagsterRunStatus.STARTED, tags)
    assert launcher.check_run_worker_health(run).status == WorkerStatus.FAILED


def test_terminate_interrupts_the_worker_and_marks_the_run_canceling(launcher: PreforkRunLauncher) -> None:
    proc = _sleeper()
    try:
        run = _run(launcher, DagsterRunStatus.STARTED, _worker_tags(proc.pid))
        assert launcher.terminate(run.run_id) is True
        assert proc.wait(10) == -signal.SIGTERM
        latest = launcher._instance.get_run_by_id(run.run_id)
        assert latest is not None and latest.status == DagsterRunStatus.CANCELING
        # Its worker is gone: nothing more to terminate.
        assert launcher.terminate(run.run_id) is False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    finished = _run(launcher, DagsterRunStatus.SUCCESS, _worker_tags(os.getpid()))
    assert launcher.terminate(finished.run_id) is False


@pytest.mark.slow
def test_the_host_preloads_the_forge_forks_workers_and_restarts_on_new_code(
        launcher: PreforkRunLauncher, monkeypatch: pytest.MonkeyPatch) -> None:
    host = launcher._running_host()
    assert host.alive and host.stamp == code_stamp()
    # What a forge run imports is in memory before the first fork.
    steps = {f"kavi.forge.{step}" for step in ("packet", "build", "verify", "research", "promote")}
    assert not set(host.failed) & (steps | {"kavi_assets.queue_definitions"}), host.failed
    assert steps <= set(forge_modules())
    # A request the run worker cannot make sense of still gets its own process, which fails on its own.
    pid = host.fork("{not a run}")
    assert pid > 0 and pid != host.proc.pid
    deadline = time.monotonic() + 30
    while ProcessOwner(pid, ProcessOwner.current().host, "").alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ProcessOwner(pid, ProcessOwner.current().host, "").alive()
    # The same code: the same host. Changed code: a new host, and the old one exits.
    assert launcher._running_host() is host
    monkeypatch.setattr(prefork, "code_stamp", lambda: "changed")
    fresh = launcher._running_host()
    assert fresh is not host and fresh.alive
    assert host.proc.wait(10) == 0


def test_a_handed_host_is_taken_only_by_the_process_it_was_meant_for(tmp_path: Path) -> None:
    import socket

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    stream, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        fd = ours.fileno()
        # Inherited by a process whose parent did not start the host (the daemon's code server): not taken.
        assert prefork.handed_host(f"{fd}:123:{os.getppid() + 1}") is None
        for garbage in ("", "x", "1:2", f"{fd}:a:{os.getppid()}", f"-1:1:{os.getppid()}"):
            assert prefork.handed_host(garbage) is None
        # A descriptor that is not a host's socket is left open, untouched.
        assert prefork.handed_host(f"{stream.fileno()}:1:{os.getppid()}") is None
        os.fstat(stream.fileno())
        taken = prefork.handed_host(f"{fd}:4321:{os.getppid()}")
        assert taken is not None and taken[1] == 4321 and taken[0].fileno() == fd
        taken[0].detach()
    finally:
        for s in (ours, theirs, stream, other):
            s.close()


@pytest.mark.slow
def test_a_host_started_by_the_command_is_handed_to_the_launcher(tmp_path: Path) -> None:
    """`kavi forge --all` starts the run host before the daemon (kavi_assets/cli/parallel.py) and hands its socket
    over: the launcher forks runs from it, does not reap it (its starter does), and a host of older code is
    replaced by one of this code."""
    from kavi_assets.cli.parallel import _start_run_host

    env = dict(os.environ)
    with (tmp_path / "host.log").open("ab") as log:
        started, fds, handover = _start_run_host(env, tmp_path, log)
    assert started is not None and fds and handover == f"{fds[0]}:{started.pid}:{os.getpid()}"
    # Named on the daemon's command line only: in no environment, so no process the daemon starts inherits it.
    assert env == dict(os.environ) and not any("RUN_HOST" in k for k in os.environ)
    try:
        # As the daemon sees it: the command is its parent.
        prefork.hand_over(f"{fds[0]}:{started.pid}:{os.getppid()}", prestart=False)
        handed = prefork.handed_host()
        assert prefork.BATCH.handed == "" and prefork.handed_host() is None  # taken once
        assert handed is not None
        host = prefork.RunHost(handed)
        assert host.alive and host.pid == started.pid and host.proc is None and host.stamp == code_stamp()
        pid = host.fork("{not a run}")  # a worker that fails on its own, forked from the handed host
        assert pid > 0 and pid != started.pid
        host.close()  # the socket's end closes: the host exits; its starter reaps it
        assert started.wait(30) == 0
    finally:
        if started.poll() is None:
            started.kill()
            started.wait()


@pytest.mark.slow
def test_a_handed_host_that_died_is_replaced_though_its_starter_has_not_reaped_it(tmp_path: Path) -> None:
    """A handed host's exit leaves a zombie until the command reaps it at its end (a signal-0 probe still finds
    it): the failed request is what marks it gone, so the launcher's next launch starts a host of its own."""
    from kavi_assets.cli.parallel import _start_run_host

    env = dict(os.environ)
    with (tmp_path / "host.log").open("ab") as log:
        started, fds, handover = _start_run_host(env, tmp_path, log)
    assert started is not None and handover
    try:
        handed = prefork.handed_host(f"{fds[0]}:{started.pid}:{os.getppid()}")
        assert handed is not None
        host = prefork.RunHost(handed)
        assert host.alive
        os.kill(started.pid, signal.SIGKILL)
        time.sleep(0.5)  # dead, not yet reaped: still there for kill(pid, 0)
        os.kill(started.pid, 0)
        with pytest.raises(prefork.HostUnavailable):
            host.fork("{not a run}")
        assert not host.alive
        host.close()
    finally:
        if started.poll() is None:
            started.kill()
        started.wait()


def test_the_batch_daemon_gives_its_run_host_options_to_its_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    """`kavi forge --all` names the run host it started, and that the host should start at once, on the daemon's
    command line (before Dagster's own arguments): the daemon's launcher takes them, Dagster gets the rest."""
    from kavi_assets.launcher import daemon

    monkeypatch.setattr(prefork, "BATCH", prefork.BatchHandover())
    rest = daemon.take_batch_options(["--prestart-run-host", "--run-host", "7:8:9", "run", "-w", "queue.yaml"])
    assert rest == ["run", "-w", "queue.yaml"]
    assert (prefork.BATCH.handed, prefork.BATCH.prestart) == ("7:8:9", True)
    # Only leading options are the launcher's; without them nothing is handed and nothing prestarts.
    assert daemon.take_batch_options(["run", "--run-host", "1:2:3"]) == ["run", "--run-host", "1:2:3"]
    assert (prefork.BATCH.handed, prefork.BATCH.prestart) == ("", False)


def test_the_batch_daemon_loads_no_code_location(tmp_path: Path) -> None:
    """The daemon `kavi forge --all` starts dequeues through the launcher, which needs no code server: its workspace
    names none, so no code server imports the forge once more while the batch starts."""
    import yaml

    from kavi_assets.cli.parallel import _workspace_file

    assert yaml.safe_load(_workspace_file(tmp_path).read_text())["load_from"] == []


@pytest.mark.slow
def test_a_forge_run_without_a_host_gets_a_fresh_run_worker_process(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """No run host (it cannot start, or it stopped answering): the run's worker is Dagster's own `dagster api
    execute_run` in a fresh interpreter, started by the launcher itself (no code server needed), tagged and watched
    like a forked one. The run here names a proposal the home lacks, so its worker ends it as a failure."""
    from dagster._core.events import DagsterEvent, DagsterEventType
    from dagster._core.launcher.base import LaunchRunContext

    from kavi_assets.cli.dagster_env import dagster_yaml
    from kavi_assets.cli.parallel import RunSubmitter

    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    (dagster_home / "dagster.yaml").write_text(dagster_yaml(dagster_home))
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    monkeypatch.setenv("KAVI_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(prefork, "BATCH", prefork.BatchHandover())  # no host handed to this process

    def no_host(self: PreforkRunLauncher) -> prefork.RunHost:
        raise prefork.HostUnavailable("no run host in this test")

    monkeypatch.setattr(PreforkRunLauncher, "_running_host", no_host)
    submitter = RunSubmitter()
    try:
        inst = submitter.instance
        run_id = submitter.submit("forge", "not_a_proposal", {})
        # What the queue's daemon reports before it hands a run to the launcher.
        inst.report_dagster_event(DagsterEvent(DagsterEventType.PIPELINE_STARTING.value, "forge"), run_id=run_id)
        run = inst.get_run_by_id(run_id)
        assert run is not None and PreforkRunLauncher.forks(run)
        ours = PreforkRunLauncher()
        ours.register_instance(inst)
        try:
            prefork.RUN_ENDS.ended.clear()
            ours.launch_run(LaunchRunContext(dagster_run=run, workspace=None))
            run = inst.get_run_by_id(run_id)
            assert run is not None and run.tags[prefork.WORKER_TAG] == "process"
            owner = ProcessOwner.from_tags(run.tags)
            assert owner is not None
            cmdline = Path(f"/proc/{owner.pid}/cmdline").read_bytes().split(b"\0")
            assert cmdline[1:5] == [b"-m", b"dagster", b"api", b"execute_run"]
            deadline = time.monotonic() + 120
            while not run.is_finished and time.monotonic() < deadline:
                assert ours.check_run_worker_health(run).status in (WorkerStatus.RUNNING, WorkerStatus.SUCCESS)
                time.sleep(0.2)
                run = inst.get_run_by_id(run_id)
                assert run is not None
            assert run.status == DagsterRunStatus.FAILURE
            types = {e.dagster_event.event_type_value for e in inst.all_logs(run_id) if e.dagster_event}
            assert {"PIPELINE_START", "PIPELINE_FAILURE"} <= types  # Dagster's run worker ran it and ended it
            deadline = time.monotonic() + 30
            while owner.alive() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert owner.alive() is False  # ended and reaped: no zombie left behind
            assert prefork.RUN_ENDS.ended.wait(10)  # and its end was seen (it wakes a batch daemon's run queue)
            assert ours.check_run_worker_health(run).status == WorkerStatus.SUCCESS
        finally:
            ours.dispose()
    finally:
        submitter.close()


def test_the_host_reads_dagster_migration_scripts_before_it_forks() -> None:
    """Every worker checks its instance's databases against Dagster's newest revision: the scripts are read once,
    by the host, and every fork inherits them."""
    from kavi_assets.launcher import storage
    from kavi_assets.launcher.host import preload

    storage._scripts.cache_clear()
    failed = preload()
    assert "Dagster's migration scripts" not in failed
    assert storage._scripts.cache_info().currsize == 1
