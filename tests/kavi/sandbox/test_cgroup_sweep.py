"""Cgroups left by a process killed outright (its own removal never ran) are removed by the next process that runs
a job: only empty ones, and only once they are older than a job's set-up could be."""

import subprocess
import time
import uuid
from pathlib import Path

import pytest

from kavi.sandbox.runner import PIDS_CGROUP_ROOT, pids_cgroup_available, sweep_leaked_cgroups

pytestmark = pytest.mark.skipif(not pids_cgroup_available(), reason="no writable pids cgroup here")


def _cgroup() -> Path:
    path = PIDS_CGROUP_ROOT / f"kavi-{uuid.uuid4().hex[:12]}"
    path.mkdir()
    return path


def test_an_old_empty_cgroup_goes_a_young_or_busy_one_stays() -> None:
    leaked, busy = _cgroup(), _cgroup()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        (busy / "cgroup.procs").write_text(str(sleeper.pid))
        sweep_leaked_cgroups()
        assert leaked.exists()  # younger than any leak could be: another process may be about to join it
        sweep_leaked_cgroups(min_age_s=0)
        assert not leaked.exists()
        assert busy.exists()  # a process is in it: the kernel keeps it
    finally:
        sleeper.kill()
        sleeper.wait()
    end = time.monotonic() + 5
    while busy.exists() and time.monotonic() < end:  # the killed process leaves the cgroup a moment later
        sweep_leaked_cgroups(min_age_s=0)
        time.sleep(0.05)
    assert not busy.exists()
