"""Hostile code under the warm runner: the same containment as a fresh sandboxed process, layer by layer, and a
server that a job can neither read, inherit from, nor use to outlive its limits."""

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kavi.sandbox import jail
from kavi.sandbox.runner import Limits, SandboxResult, netns_prefix, pids_cgroup_available
from kavi.sandbox.warm import WarmRunner, run_warm, warm_runner


@pytest.fixture(autouse=True)
def _no_gate_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm runner is the opt-in fallback where bubblewrap cannot build the gate sandbox: test it as such."""
    monkeypatch.setattr(jail, "probe", lambda: "switched off for the warm runner's own tests")
    monkeypatch.setenv("KAVI_WARM_RUNNER", "1")


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> WarmRunner:
    r = warm_runner(enabled=True)
    if r is None:
        pytest.skip("the warm runner cannot start here")
    return r


def _py(code: str, tmp_path: Path, **limits: object) -> SandboxResult:
    return run_warm([sys.executable, "-c", code], cwd=tmp_path / "box", limits=Limits(**limits))  # type: ignore[arg-type]


def test_runs_forked_with_every_layer_named(runner: WarmRunner, tmp_path: Path) -> None:
    res = _py("import sys; print('hi', sys.argv)", tmp_path, wall_s=20)
    assert res.returncode == 0 and res.stdout.strip() == "hi ['-c']"
    for layer in ("environment", "rlimits", "wall_timeout", "net", "cgroup", "mount", "user", "pid", "seccomp",
                  "working_dir"):
        assert res.isolation[layer].startswith(("active", "omitted: ")), layer
    assert res.isolation["interpreter"].startswith("active: forked from the warm runner")


def test_off_unless_asked_for_a_job_runs_in_a_fresh_interpreter(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An opt-in: without KAVI_WARM_RUNNER (even with a server already running in this process) a job starts a
    fresh interpreter, and the report says why and how to turn the warm runner on."""
    monkeypatch.delenv("KAVI_WARM_RUNNER")
    assert warm_runner() is None
    res = _py("import sys; print('hi', sys.argv)", tmp_path, wall_s=20)
    assert res.returncode == 0 and res.stdout.strip() == "hi ['-c']"
    assert res.isolation["interpreter"] == ("omitted: a fresh interpreter per job (the warm runner is off: "
                                            "KAVI_WARM_RUNNER=1 turns it on)")


def test_module_job_is_like_python_dash_m(runner: WarmRunner, tmp_path: Path) -> None:
    box = tmp_path / "box"
    (box / "pkg").mkdir(parents=True)
    (box / "pkg" / "__init__.py").write_text("")
    (box / "pkg" / "__main__.py").write_text(
        "import os, sys\nprint(sys.path[0] == os.getcwd(), __name__)\nraise SystemExit(3)\n")
    res = run_warm([sys.executable, "-m", "pkg", "a"], cwd=box, limits=Limits(wall_s=20))
    assert res.returncode == 3 and res.stdout.split() == ["True", "__main__"]


def test_uncaught_exception_exits_1_with_traceback(runner: WarmRunner, tmp_path: Path) -> None:
    res = _py("raise ValueError('boom')", tmp_path, wall_s=20)
    assert res.returncode == 1 and "ValueError: boom" in res.stderr
    assert "warm_server" not in res.stderr


def test_secrets_in_the_parent_environment_do_not_reach_the_job(runner: WarmRunner, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("DAGSTER_HOME", "/somewhere")
    res = _py("import os, json, tempfile; print(json.dumps(dict(os.environ))); print(tempfile.gettempdir())",
              tmp_path, wall_s=20)
    assert "sk-should-not-leak" not in res.stdout and "DAGSTER_HOME" not in res.stdout and "KAVI_" not in res.stdout
    assert str(tmp_path / "box" / "home") in res.stdout
    assert res.stdout.strip().splitlines()[-1] == str(tmp_path / "box" / "tmp")


def test_no_descriptor_of_the_server_or_forge_is_inherited(runner: WarmRunner, tmp_path: Path) -> None:
    res = _py("import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))", tmp_path, wall_s=20)
    # 0-2 are the job's pipes; the one more is the directory listdir itself opened.
    assert res.returncode == 0 and eval(res.stdout)[:3] == [0, 1, 2] and len(eval(res.stdout)) <= 4


def test_the_server_cannot_be_read_or_traced_by_a_job(runner: WarmRunner, tmp_path: Path) -> None:
    code = (f"import os\nst = open('/proc/{runner.proc.pid}/status').read()\n"
            "print([ln for ln in st.splitlines() if ln.startswith('PPid')])\n"
            f"print(os.stat('/proc/{runner.proc.pid}/mem').st_uid)")
    res = _py(code, tmp_path, wall_s=20)
    # The server marks itself non-dumpable: /proc/<pid>/mem belongs to root, not to the job's user.
    if os.geteuid() != 0:
        assert res.stdout.strip().splitlines()[-1] == "0"


def test_socket_is_refused(runner: WarmRunner, tmp_path: Path) -> None:
    prefix, note = netns_prefix()
    if not prefix:
        pytest.skip(f"network isolation unavailable here: {note}")
    code = "import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(('127.0.0.1', 9))\nprint('connected')"
    res = _py(code, tmp_path, wall_s=20)
    assert res.returncode != 0 and "connected" not in res.stdout
    assert "Network is unreachable" in res.stderr or "refused" in res.stderr.lower()
    assert res.isolation["net"].startswith("active")


def test_each_job_has_its_own_network_namespace(runner: WarmRunner, tmp_path: Path) -> None:
    if not runner.netns_per_job:
        pytest.skip("this kernel does not let the warm runner's children enter their own network namespace")
    # Both jobs alive at once: a namespace's inode number is reused once it is freed, so jobs one after the other
    # could show the same number for two namespaces.
    code = "import os, time; print(os.readlink('/proc/self/ns/net'), time.time(), flush=True); time.sleep(2)"
    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(lambda _: _py(code, tmp_path, wall_s=20), range(2))
    (ns_a, t_a), (ns_b, t_b) = a.stdout.split(), b.stdout.split()
    assert abs(float(t_a) - float(t_b)) < 1.5  # they overlapped
    assert ns_a.startswith("net:[") and ns_a != ns_b
    assert ns_a != os.readlink(f"/proc/{runner.proc.pid}/ns/net")


def test_sleep_forever_is_killed_at_the_wall_with_its_children(runner: WarmRunner, tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    code = (f"import subprocess, time\np = subprocess.Popen(['sleep', '300'])\n"
            f"open({str(marker)!r}, 'w').write(str(p.pid))\ntime.sleep(300)")
    res = _py(code, tmp_path, wall_s=1.5)
    assert res.timed_out and res.duration_s < 10 and res.killed_by_signal == 9
    pid = int(marker.read_text())
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_ten_gigabytes_is_refused(runner: WarmRunner, tmp_path: Path) -> None:
    res = _py("x = bytearray(10 * 1024 ** 3)", tmp_path, wall_s=30, address_space_mb=1024)
    assert res.returncode != 0 and "MemoryError" in res.stderr


def test_cpu_limit_binds_the_job(runner: WarmRunner, tmp_path: Path) -> None:
    res = _py("while True:\n    pass", tmp_path, wall_s=30, cpu_s=1)
    assert not res.timed_out and res.killed_by_signal is not None and res.duration_s < 10


def test_fork_bomb_is_bounded(runner: WarmRunner, tmp_path: Path) -> None:
    if not pids_cgroup_available() and os.geteuid() == 0:
        pytest.skip("no pids cgroup, and RLIMIT_NPROC does not bind root")
    res = _py("import os\nwhile True:\n    os.fork()", tmp_path, wall_s=5, max_processes=16)
    assert res.duration_s < 15
    assert "Resource temporarily unavailable" in res.stderr or res.timed_out


def test_big_file_write_is_cut_by_rlimit(runner: WarmRunner, tmp_path: Path) -> None:
    code = "f = open('big', 'wb')\nf.write(b'x' * (8 * 1024 * 1024))\nf.close()"
    res = _py(code, tmp_path, wall_s=20, file_size_mb=1)
    assert res.returncode != 0
    assert (tmp_path / "box" / "big").stat().st_size <= 1024 * 1024


def test_a_job_that_kills_the_server_gets_a_fresh_process_and_the_next_job_a_new_server(
        runner: WarmRunner, tmp_path: Path) -> None:
    code = f"import os, signal\nos.kill({runner.proc.pid}, signal.SIGKILL)\nprint('done')"
    res = _py(code, tmp_path, wall_s=20)
    assert res.stdout.strip().endswith("done")
    nxt = _py("print('after')", tmp_path, wall_s=20)
    assert nxt.returncode == 0 and nxt.stdout.strip() == "after"
    again = warm_runner()
    assert again is not None and again.proc.pid != runner.proc.pid
