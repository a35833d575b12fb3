"""Gate jobs started ahead of their work (kavi.sandbox.held): the same job's result as a fresh start, its files
written in place after its sandbox was built, its wall timeout counted from the release, used once, and released
with nothing run when no verification takes it; the launcher every gate job starts with."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from kavi.build.sandbox_dir import write_files
from kavi.sandbox import held
from kavi.sandbox.launch import NOT_RELEASED, USAGE
from kavi.sandbox.runner import Limits, run_sandboxed
from tests.factories import require_gate_sandbox

ECHO = "import sys; data = sys.stdin.read(); print(open('skills/s.py').read() + '|' + data)"


@pytest.fixture
def _sandbox() -> None:
    require_gate_sandbox()


def _launch() -> list[str]:
    """A job through the launcher: it imports json, then runs the module `job_main` of the job's folder."""
    return [sys.executable, "-m", "kavi.sandbox.launch", "json", "job_main"]


def _folder(root: Path, code: str) -> Path:
    work = root / "job"
    (work / "skills").mkdir(parents=True)
    (work / "skills" / "s.py").write_bytes(b"")  # a placeholder: the job's bytes come later, in place
    (work / "job_main.py").write_text(code)
    return work


def test_launcher_usage_and_an_unreleased_job(tmp_path: Path) -> None:
    usage = subprocess.run([sys.executable, "-m", "kavi.sandbox.launch"], capture_output=True, text=True, check=False)
    assert usage.returncode == USAGE and "usage" in usage.stderr
    marker = tmp_path / "ran"
    (tmp_path / "job_main.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    unreleased = subprocess.run([sys.executable, "-m", "kavi.sandbox.launch", "json", "job_main"], cwd=tmp_path,
                                input=b"", capture_output=True, check=False)
    assert unreleased.returncode == NOT_RELEASED and not marker.exists()
    released = subprocess.run([sys.executable, "-m", "kavi.sandbox.launch", "json", "job_main"], cwd=tmp_path,
                              input=b"go", capture_output=True, check=False)
    assert released.returncode == 0 and marker.read_text() == "x"


@pytest.mark.usefixtures("_sandbox")
def test_a_held_job_gives_what_a_fresh_one_gives_with_its_files_written_after_the_start(tmp_path: Path) -> None:
    limits = Limits(wall_s=30)
    work = _folder(tmp_path / "held", f"exec({ECHO!r})\n")
    job = held.shape(_launch(), cwd=work, limits=limits, scratch=True, files=["skills/s.py"])
    assert held.hold(job) is not None
    assert held.holds(work) and held.hold(job) is None  # one job per folder
    time.sleep(0.5)  # the sandbox is built and its interpreter waits, before the job's bytes exist
    write_files(work, {"skills/s.py": b"the skill"}, in_place=True)
    held.hand_over(work)
    ahead = held.take(job)
    assert ahead is not None and not held.holds(work)
    res = ahead.run(b"the job")
    fresh_work = _folder(tmp_path / "fresh", f"exec({ECHO!r})\n")
    (fresh_work / "skills" / "s.py").write_bytes(b"the skill")
    fresh = run_sandboxed(_launch(), cwd=fresh_work, limits=limits, stdin=b"the job", scratch=True)
    assert (res.returncode, res.stdout) == (fresh.returncode, fresh.stdout) == (0, "the skill|the job\n")
    assert res.isolation["interpreter"] == held.HELD_INTERPRETER
    assert {k: v for k, v in res.isolation.items() if k != "interpreter"} == fresh.isolation
    with pytest.raises(RuntimeError):
        ahead.run(b"again")


@pytest.mark.usefixtures("_sandbox")
def test_the_wall_timeout_counts_from_the_release(tmp_path: Path) -> None:
    """Held longer than its wall limit, the job still gets its whole limit once released; the limit still binds."""
    code = "import sys, time; sys.stdin.read(); time.sleep(float(open('skills/s.py').read()))"
    work = _folder(tmp_path, code)
    job = held.shape(_launch(), cwd=work, limits=Limits(wall_s=2), scratch=True, files=["skills/s.py"])
    assert held.hold(job) is not None
    time.sleep(2.5)
    write_files(work, {"skills/s.py": b"0.1"}, in_place=True)
    held.hand_over(work)
    ahead = held.take(job)
    assert ahead is not None
    res = ahead.run(b"go")
    assert res.returncode == 0 and not res.timed_out
    work2 = _folder(tmp_path / "second", code)
    job2 = held.shape(_launch(), cwd=work2, limits=Limits(wall_s=1), scratch=True, files=["skills/s.py"])
    assert held.hold(job2) is not None
    write_files(work2, {"skills/s.py": b"30"}, in_place=True)
    held.hand_over(work2)
    ahead2 = held.take(job2)
    assert ahead2 is not None
    assert ahead2.run(b"go").timed_out


@pytest.mark.usefixtures("_sandbox")
def test_a_job_of_another_shape_is_not_served_and_one_not_taken_runs_nothing(tmp_path: Path) -> None:
    code = "import sys; sys.stdin.read(); open('ran', 'w').write('x')"
    work = _folder(tmp_path / "first", code)
    first = held.hold(held.shape(_launch(), cwd=work, limits=Limits(wall_s=30)))
    assert first is not None
    assert held.take(held.shape(_launch(), cwd=work, limits=Limits(wall_s=31))) is None  # released, not served
    assert not held.holds(work)
    work2 = _folder(tmp_path / "second", code)
    second = held.hold(held.shape(_launch(), cwd=work2, limits=Limits(wall_s=30)))
    assert second is not None
    held.release_under(tmp_path / "second")
    assert not held.holds(work2)
    for job, folder in ((first, work), (second, work2)):
        assert job.ended_with(30).returncode == NOT_RELEASED
        assert not (folder / "ran").exists()


def test_a_held_job_whose_process_ended_before_its_job_came_is_not_run(tmp_path: Path) -> None:
    """Killed while it waited (here: its preload exits), it never saw a job: its run gives nothing, and the caller
    starts the job afresh, rather than judging a process that was gone."""
    require_gate_sandbox()
    work = _folder(tmp_path, "print('ran')\n")
    (work / "boom.py").write_text("open('booted', 'w').write('x')\nimport os\nos._exit(9)\n")
    ahead = held.hold(held.shape([sys.executable, "-m", "kavi.sandbox.launch", "boom", "job_main"], cwd=work,
                                 limits=Limits(wall_s=30)))
    assert ahead is not None
    for _ in range(300):  # its preload ran (and exits right after)
        if (work / "booted").exists():
            break
        time.sleep(0.05)
    time.sleep(1.0)
    taken = held.take(ahead.job)
    assert taken is ahead
    assert taken.run(b"go") is None
