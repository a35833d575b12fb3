"""Hostile code under the sandbox runner: contained within its limits, with the isolation named."""

import os
import sys
import uuid
from pathlib import Path

import pytest

from kavi.sandbox.runner import Limits, netns_prefix, pids_cgroup_available, run_sandboxed


def _py(code: str, tmp_path: Path, **limits: object) -> object:
    return run_sandboxed([sys.executable, "-c", code], cwd=tmp_path / "box", limits=Limits(**limits))  # type: ignore[arg-type]


def test_isolation_is_always_named(tmp_path: Path) -> None:
    res = run_sandboxed([sys.executable, "-c", "print('hi')"], cwd=tmp_path / "box", limits=Limits(wall_s=20))
    assert res.returncode == 0 and res.stdout.strip() == "hi"
    for layer in ("environment", "rlimits", "wall_timeout", "net", "cgroup", "mount", "user", "pid", "seccomp",
                  "working_dir"):
        assert res.isolation[layer].startswith(("active", "omitted: ")), layer
    assert all(v != "omitted: " for v in res.isolation.values())


def test_secrets_in_the_parent_environment_do_not_reach_the_child(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("KAVI_LLM_API_KEY", "also-secret")
    monkeypatch.setenv("DAGSTER_HOME", "/somewhere")
    res = run_sandboxed([sys.executable, "-c", "import os, json; print(json.dumps(dict(os.environ)))"],
                        cwd=tmp_path / "box", limits=Limits(wall_s=20))
    assert "sk-should-not-leak" not in res.stdout and "also-secret" not in res.stdout
    assert "DAGSTER_HOME" not in res.stdout and "KAVI_" not in res.stdout
    assert str(tmp_path / "box" / "home") in res.stdout


def test_socket_is_refused(tmp_path: Path) -> None:
    prefix, note = netns_prefix()
    if not prefix:
        pytest.skip(f"network isolation unavailable here: {note}")
    code = "import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(('127.0.0.1', 9))\nprint('connected')"
    res = run_sandboxed([sys.executable, "-c", code], cwd=tmp_path / "box", limits=Limits(wall_s=20))
    assert res.returncode != 0 and "connected" not in res.stdout
    assert "Network is unreachable" in res.stderr or "refused" in res.stderr.lower()
    assert res.isolation["net"].startswith("active")


def test_sleep_forever_is_killed_at_the_wall(tmp_path: Path) -> None:
    code = "import subprocess, time\nsubprocess.Popen(['sleep', '300'])\ntime.sleep(300)"
    res = run_sandboxed([sys.executable, "-c", code], cwd=tmp_path / "box", limits=Limits(wall_s=1.5))
    assert res.timed_out and res.duration_s < 10


def test_ten_gigabytes_is_refused(tmp_path: Path) -> None:
    res = run_sandboxed([sys.executable, "-c", "x = bytearray(10 * 1024 ** 3)"], cwd=tmp_path / "box",
                        limits=Limits(wall_s=30, address_space_mb=1024))
    assert res.returncode != 0 and "MemoryError" in res.stderr


def test_fork_bomb_is_bounded(tmp_path: Path) -> None:
    if not pids_cgroup_available() and os.geteuid() == 0:
        pytest.skip("no pids cgroup, and RLIMIT_NPROC does not bind root")
    code = "import os\nwhile True:\n    os.fork()"
    res = run_sandboxed([sys.executable, "-c", code], cwd=tmp_path / "box", limits=Limits(wall_s=5, max_processes=16))
    assert res.duration_s < 15
    assert "Resource temporarily unavailable" in res.stderr or res.timed_out


def test_big_file_write_is_cut_by_rlimit(tmp_path: Path) -> None:
    code = "f = open('big', 'wb')\nf.write(b'x' * (8 * 1024 * 1024))\nf.close()"
    res = run_sandboxed([sys.executable, "-c", code], cwd=tmp_path / "box", limits=Limits(wall_s=20, file_size_mb=1))
    assert res.returncode != 0
    assert (tmp_path / "box" / "big").stat().st_size <= 1024 * 1024


def test_write_outside_the_sandbox_is_reported_honestly(tmp_path: Path) -> None:
    """Without bubblewrap the host filesystem stays writable; the report must say so rather than hide it."""
    marker = tmp_path / f"escape-{uuid.uuid4().hex}"
    res = run_sandboxed([sys.executable, "-c", f"open({str(marker)!r}, 'w').write('x')"], cwd=tmp_path / "box",
                        limits=Limits(wall_s=20))
    if marker.exists():
        assert res.isolation["mount"].startswith("omitted: ")
    else:
        assert res.isolation["mount"].startswith("active")
