"""The gate sandbox holds against the code it runs: canary files, a loopback listener, host sockets, decoy
secrets, victim processes and the forge's own files, attacked from inside a gate job and from a builder's
tests; and each layer proven necessary by switching it off and watching its attack get through."""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import kavi
import kavi_assets
from kavi.gates.runner import GateConfig, run_gates
from kavi.proposals.model import parse_proposal
from kavi.sandbox import jail
from kavi.sandbox.runner import Limits, SandboxResult
from kavi.sandbox.warm import run_warm
from tests.factories import require_gate_sandbox, warm_mypy_cache_root

pytestmark = pytest.mark.containment

ATTACKS = (Path(__file__).parent / "attacks.py").read_text()
PACKAGE = Path(kavi.__file__).resolve().parent  # the core: the runners and the recorded answers
CONTRACT = Path(kavi_assets.__file__).resolve().parent  # the package of the contract skills import
LAYER_ATTACK = {  # the attack each layer alone stops
    "user": "privileges",
    "mount": "write_tmp",
    "pid": "kill_same_uid",
    "net": "tcp",
    "seccomp": "ptrace",
    "cgroup": "own_cgroup",
}
# Writes that succeed inside the sandbox and must land in its private /tmp and /dev/shm, never the host's:
# for these the host side decides.
PRIVATE = {"write_tmp", "write_shm"}


@pytest.fixture(autouse=True, scope="module")
def _sandbox_required() -> None:
    require_gate_sandbox()


@dataclass
class World:
    """What a gate job must not reach, all made reachable by permissions (mode 0777/0666) so that only the
    sandbox stands in the way."""

    root: Path
    token: str
    decoy_key: str
    decoy_holdout: str
    decoy_ssh: str
    tcp_port: int = 0
    udp_port: int = 0
    tcp_hits: list[bytes] = field(default_factory=list)
    udp_hits: list[bytes] = field(default_factory=list)
    victims: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    snapshot: dict[str, bytes] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "kavi-home"

    @property
    def user_home(self) -> Path:
        return self.root / "user-home"

    def files(self) -> dict[str, bytes]:
        return {str(p): p.read_bytes() for p in sorted(self.root.rglob("*")) if p.is_file() and not p.is_socket()}

    def params(self) -> dict[str, object]:
        home = self.home
        return {"attacks": {
            "write_tmp": f"write /tmp/kavi-canary-{self.token}",
            "write_shm": f"write /dev/shm/kavi-canary-{self.token}",
            "write_user_home": f"write {self.user_home}/planted",
            "write_ledger": f"write {home}/ledger.duckdb",
            "write_registry": f"write {home}/registry.json",
            "write_skills": f"write {home}/skills/planted.py",
            "write_runner": f"write {PACKAGE}/gates/acceptance_runner.py",
            "write_contract": f"write {CONTRACT}/skills/base.py",
            "read_ledger": f"read {home}/ledger.duckdb",
            "read_ssh": f"read {self.user_home}/.ssh/id_rsa",
            "read_cassette": f"read {PACKAGE}/llm/cassettes/word_count.yaml",
            "list_cassettes": f"listdir {PACKAGE}/llm/cassettes",
            "read_environ": f"read /proc/{os.getpid()}/environ",
            "kill_forge": f"kill {os.getpid()}",
            "kill_forge_group": f"killpg {os.getpgid(0)}",
            "kill_root_victim": f"kill {self.victims['root'].pid}",
            "kill_same_uid": f"kill {self.victims['same_uid'].pid}",
            "setns": f"setns {os.getpid()}",
            "tcp": f"tcp {self.tcp_port}",
            "udp": f"udp {self.udp_port}",
            "unix": f"unix {home}/forge.sock",
            "unix_abstract": f"unix \0kavi-containment-{self.token}",
            "dns": "dns",
            "unshare_user": "unshare_user",
            "ptrace": "ptrace",
            "keyctl": "keyctl",
            "mount": "mount",
            "privileges": "privileges",
            "own_cgroup": "own_cgroup",
            "leave_cgroup": "leave_cgroup",
            "daemon": f"daemon {self.token}",
        }}


def _serve_tcp(sock: socket.socket, hits: list[bytes]) -> None:
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        with conn:
            hits.append(conn.recv(64) or b"<connected>")


def _serve_udp(sock: socket.socket, hits: list[bytes]) -> None:
    while True:
        try:
            hits.append(sock.recv(64))
        except OSError:
            return


@pytest.fixture()
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    token = uuid.uuid4().hex[:12]
    root = Path(f"/tmp/kavi-containment-{token}")
    w = World(root=root, token=token, decoy_key=f"sk-decoy-{uuid.uuid4().hex}",
              decoy_holdout=f"HOLDOUT-{uuid.uuid4().hex}", decoy_ssh=f"SSH-DECOY-{uuid.uuid4().hex}")
    for d in (w.home / "skills", w.home / "artifacts", w.user_home / ".ssh"):
        d.mkdir(parents=True)
    (w.home / "ledger.duckdb").write_text(f"holdout: {w.decoy_holdout}\n")
    (w.home / "registry.json").write_text('{"skills": []}\n')
    (w.user_home / ".ssh" / "id_rsa").write_text(f"{w.decoy_ssh}\n")
    for p in [root, *root.rglob("*")]:
        p.chmod(0o777 if p.is_dir() else 0o666)
    monkeypatch.setenv("KAVI_LLM_API_KEY", w.decoy_key)
    monkeypatch.setenv("HOME", str(w.user_home))
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(w.home / "forge.sock"))
    os.chmod(w.home / "forge.sock", 0o777)
    unix.listen()
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(f"\0kavi-containment-{token}")
    abstract.listen()
    w.tcp_port, w.udp_port = tcp.getsockname()[1], udp.getsockname()[1]
    threading.Thread(target=_serve_tcp, args=(tcp, w.tcp_hits), daemon=True).start()
    threading.Thread(target=_serve_udp, args=(udp, w.udp_hits), daemon=True).start()
    # Each victim in a session of its own: a test that switches the PID layer off lets its attack kill the test
    # process's group, and the victims of a world in another test process (pytest-xdist's workers share that group)
    # must not be in it.
    w.victims["root"] = subprocess.Popen(["sleep", "120"], start_new_session=True)
    setpriv = shutil.which("setpriv")
    same_uid = ([setpriv, f"--reuid={jail.SANDBOX_UID}", f"--regid={jail.SANDBOX_GID}", "--clear-groups"]
                if os.geteuid() == 0 and setpriv else [])
    w.victims["same_uid"] = subprocess.Popen([*same_uid, "sleep", "120"], start_new_session=True)
    w.snapshot = w.files()
    try:
        yield w
    finally:
        for v in w.victims.values():
            if v.poll() is None:
                v.kill()
            v.wait()
        for s in (tcp, udp, unix, abstract):
            s.close()
        _kill_survivors(token)
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(f"{root}-jobs", ignore_errors=True)
        for p in (Path(f"/tmp/kavi-canary-{token}"), Path(f"/dev/shm/kavi-canary-{token}")):
            p.unlink(missing_ok=True)


def _survivors(token: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if token.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _kill_survivors(token: str) -> None:
    for pid in _survivors(token):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _attack(w: World, tmp_path: Path) -> tuple[dict[str, str], SandboxResult]:
    # The job's directory is reachable for any user (only the sandbox, not permissions, should confine it).
    jobs = Path(f"{w.root}-jobs")
    jobs.mkdir(mode=0o711, exist_ok=True)
    jobs.chmod(0o711)
    res = run_warm([sys.executable, "-c", ATTACKS, json.dumps(w.params())], cwd=jobs / uuid.uuid4().hex[:8],
                   limits=Limits(wall_s=60))
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("KAVI-ATTACKS:")), None)
    assert line is not None, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    return json.loads(line[len("KAVI-ATTACKS:"):]), res


def _host_side_escapes(w: World) -> list[str]:
    escapes = []
    if Path(f"/tmp/kavi-canary-{w.token}").exists():
        escapes.append("a file appeared in the host's /tmp")
    if Path(f"/dev/shm/kavi-canary-{w.token}").exists():
        escapes.append("a file appeared in the host's /dev/shm")
    if w.files() != w.snapshot:
        escapes.append("the skills home, the user's home or the canaries changed")
    if w.tcp_hits:
        escapes.append(f"the loopback listener was reached: {w.tcp_hits}")
    if w.udp_hits:
        escapes.append(f"the UDP listener was reached: {w.udp_hits}")
    for name, v in w.victims.items():
        if v.poll() is not None:
            escapes.append(f"the {name} victim process was killed")
    if _survivors(w.token):
        escapes.append("a process started by the job outlived it")
    return escapes


def test_every_attack_from_a_gate_job_is_contained(world: World, tmp_path: Path) -> None:
    out, res = _attack(world, tmp_path)
    escaped = {k: v for k, v in out.items() if not v.startswith("blocked:") and k not in PRIVATE}
    assert not escaped, escaped
    assert not _host_side_escapes(world)
    for decoy in (world.decoy_key, world.decoy_holdout, world.decoy_ssh):
        assert decoy not in res.stdout + res.stderr
    assert "recorded" not in res.stdout  # no cassette text either
    for layer in jail.LAYERS:
        assert res.isolation[layer].startswith("active"), (layer, res.isolation[layer])
    # and the package the gates run from is intact
    assert (PACKAGE / "gates" / "acceptance_runner.py").read_text().startswith('"""Runs inside the gate sandbox')
    assert (CONTRACT / "skills" / "base.py").read_text().startswith('"""The skill contract as skills import it')


@pytest.mark.parametrize("layer", sorted(LAYER_ATTACK))
def test_switching_a_layer_off_lets_its_attack_through(world: World, tmp_path: Path, layer: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite is not vacuous: without each layer, the attack that layer stops gets through, the check that
    guards it fails, and the isolation report says the layer was omitted."""
    monkeypatch.setenv(jail.OFF_VARIABLE, layer)
    out, res = _attack(world, tmp_path)
    attack = LAYER_ATTACK[layer]
    assert out[attack].startswith("ok:"), (layer, out[attack])
    if attack == "write_tmp":
        assert Path(f"/tmp/kavi-canary-{world.token}").exists()
    assert res.isolation[layer].startswith("omitted: switched off"), res.isolation[layer]
    others = {k: v for k, v in out.items() if not v.startswith("blocked:") and k != attack and k not in PRIVATE}
    # Other layers still hold what they alone stop.
    for other, other_attack in LAYER_ATTACK.items():
        if other != layer:
            assert other_attack not in others, (layer, other, others)


# -- the same attacks from a builder's tests, through the gates -------------------------------------------------

PROPOSAL = {
    "name": "word_count",
    "description": "Count the words in a text, splitting on whitespace.",
    "inputs": [{"name": "text", "type": "str"}],
    "outputs": [{"name": "count", "type": "int"}],
    "side_effect_class": "READ_ONLY",
    "examples": [{"input": {"text": "a b c"}, "expected": {"count": 3}}],
    "holdout_examples": [{"input": {"text": "one two three four"}, "expected": {"count": 4}}],
}

SKILL = '''from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class WordCountInput(BaseModel):
    text: str


class WordCountOutput(BaseModel):
    count: int


class WordCount(BaseSkill[WordCountInput, WordCountOutput]):
    name = "word_count"
    description = "Count the words in a text, splitting on whitespace."
    input_model = WordCountInput
    output_model = WordCountOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: WordCountInput) -> WordCountOutput:
        return WordCountOutput(count=len(input_data.text.split()){wrong})
'''

HOSTILE_TEST = '''import json
import sys

from skills.word_count import WordCount, WordCountInput

ATTACKS = {attacks!r}
PARAMS = {params!r}


def test_counts() -> None:
    assert WordCount().execute(WordCountInput(text="a b c")).count == 3


def test_escape() -> None:
    sys.argv = ["attacks", json.dumps(PARAMS)]
    scope = {{"__name__": "kavi_attacks"}}
    exec(ATTACKS, scope)
    out = scope["run"](PARAMS["attacks"])
    print("ATTACK-RESULTS", json.dumps(out))
    private = {{"write_tmp", "write_shm"}}  # succeed inside, in the sandbox's own /tmp and /dev/shm
    assert all(v.startswith("ok:") for k, v in out.items() if k not in private), out
'''


def _gate_files(w: World, *, wrong: str = "", extra: dict[str, str] | None = None) -> dict[str, bytes]:
    params = w.params()
    attacks = dict(params["attacks"])  # type: ignore[call-overload]
    attacks.update(extra or {})
    params = {"attacks": attacks}
    return {
        "skills/word_count.py": SKILL.replace("{wrong}", wrong).encode(),
        "tests/test_skill_word_count.py": HOSTILE_TEST.format(attacks=ATTACKS, params=params).encode(),
    }


def test_a_builders_hostile_tests_are_contained_and_fail_the_gate(world: World, tmp_path: Path) -> None:
    proposal = parse_proposal(PROPOSAL)
    work = tmp_path / "gates"
    extra = {  # the copies the other gates read, and the acceptance directory, by absolute path
        "write_static_copy": f"write {work}/static/skills/word_count.py",
        "write_acceptance": f"write {work}/acceptance/skills/word_count.py",
    }
    out = run_gates(work, proposal, _gate_files(world, extra=extra),
                    GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy")))
    by_gate = {r.gate: r for r in out.results}
    assert by_gate["pytest"].verdict.value == "failed"  # the escape test could not succeed
    assert "1 of 2 tests failed" in by_gate["pytest"].reason, by_gate["pytest"].reason
    assert by_gate["acceptance"].ok and by_gate["ruff"].reason  # the other gates were not disturbed
    assert by_gate["mypy"].ok, by_gate["mypy"].messages
    assert not _host_side_escapes(world)
    stored = json.dumps([(r.gate, r.reason, r.messages, str(r.details)) for r in out.results])
    for decoy in (world.decoy_key, world.decoy_holdout, world.decoy_ssh):
        assert decoy not in stored
    assert not out.passed


def test_a_wrong_skill_cannot_fake_its_acceptance(world: World, tmp_path: Path) -> None:
    """A wrong skill (off by one on the holdout) whose tests try to rewrite the runner, the holdouts in the
    ledger and the acceptance copy: the attacks fail and so does acceptance."""
    proposal = parse_proposal(PROPOSAL)
    wrong = " if len(input_data.text.split()) != 4 else 5"
    work = tmp_path / "gates"
    extra = {"write_acceptance": f"write {work}/acceptance/skills/word_count.py"}
    out = run_gates(work, proposal, _gate_files(world, wrong=wrong, extra=extra),
                    GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy")))
    by_gate = {r.gate: r for r in out.results}
    assert not by_gate["acceptance"].ok
    assert by_gate["acceptance"].messages == ["1 of 1 holdout example(s) failed"]
    assert not out.passed
    assert not _host_side_escapes(world)


def test_a_builders_exit_127_is_not_mistaken_for_the_forges_failure(tmp_path: Path) -> None:
    """Exit 126/127 or a fake "bwrap:" line from the builder's code must not pass for infrastructure (which would
    not count against the model): the sandbox writes a start marker before the command runs."""
    from kavi.infrastructure import infrastructure_cause

    proposal = parse_proposal(PROPOSAL)
    tests = "import os\nimport sys\n\nprint('bwrap: Can\\'t mount proc', file=sys.stderr)\nos._exit(127)\n"
    out = run_gates(tmp_path / "gates", proposal,
                    {"skills/word_count.py": SKILL.replace("{wrong}", "").encode(),
                     "tests/test_skill_word_count.py": tests.encode()},
                    GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy")))
    pytest_gate = next(r for r in out.results if r.gate == "pytest")
    assert not pytest_gate.ok and pytest_gate.details["sandbox_started"] is True
    assert infrastructure_cause(pytest_gate) is None


def test_a_sandbox_that_cannot_be_built_is_the_forges_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kavi.infrastructure import infrastructure_cause

    real_build = jail.build

    def broken(cwd: Path, rw: object, **kw: object) -> jail.JailCommand:
        cmd = real_build(cwd, rw, **kw)  # type: ignore[arg-type]
        cmd.prefix[1:1] = ["--ro-bind", str(tmp_path / "missing"), "/missing"]
        return cmd

    monkeypatch.setattr(jail, "build", broken)
    proposal = parse_proposal(PROPOSAL)
    out = run_gates(tmp_path / "gates", proposal,
                    {"skills/word_count.py": SKILL.replace("{wrong}", "").encode(),
                     "tests/test_skill_word_count.py": b"def test_ok() -> None:\n    assert True\n"},
                    GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy")))
    pytest_gate = next(r for r in out.results if r.gate == "pytest")
    assert not pytest_gate.ok and pytest_gate.details["sandbox_started"] is False
    assert infrastructure_cause(pytest_gate) is not None


def test_a_skill_file_swapped_for_a_fifo_or_link_cannot_hang_or_fool_the_forge(tmp_path: Path) -> None:
    """The skill runs in acceptance even when the policy refuses it: at import it swaps its own file for a FIFO
    (a read by the forge would block for ever), and the builder's tests swap theirs for a link to a host file."""
    proposal = parse_proposal(PROPOSAL)
    swap = ("import os\nos.remove('skills/word_count.py')\nos.mkfifo('skills/word_count.py')\n")
    skill = swap + SKILL.replace("{wrong}", "")
    tests = ("import os\n\n\ndef test_swap() -> None:\n    os.remove('skills/word_count.py')\n"
             "    os.symlink('/etc/ld.so.cache', 'skills/word_count.py')\n")
    out = run_gates(tmp_path / "gates", proposal,
                    {"skills/word_count.py": skill.encode(), "tests/test_skill_word_count.py": tests.encode()},
                    GateConfig(wall_s=30, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy")))
    by_gate = {r.gate: r for r in out.results}
    assert not out.passed
    # The files sit read-only in the job's scratch directory, so both swaps are refused; were one to succeed,
    # the forge would see a changed hash (it reads without following links, never a FIFO) rather than hang.
    assert not by_gate["acceptance"].ok, by_gate["acceptance"].reason
    assert not by_gate["pytest"].ok, by_gate["pytest"].reason
    assert out.duration_s < 60


def test_memory_is_bounded_for_the_whole_job_not_only_per_process(tmp_path: Path) -> None:
    """Each process stays under the address-space limit, but together they ask for four times the job's memory:
    the memory cgroup (where the host has one) kills some of them instead of letting the host swap or OOM."""
    from kavi.sandbox.runner import MEMORY_CGROUP_ROOT, run_sandboxed

    if not MEMORY_CGROUP_ROOT.is_dir():
        pytest.skip("no memory cgroup controller on this host")
    code = (
        "import os, time\n"
        "kids = []\n"
        "for i in range(4):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        b = bytearray(320 * 1024 * 1024)\n"
        "        for j in range(0, len(b), 4096):\n"
        "            b[j] = 1\n"
        "        time.sleep(2)\n"
        "        os._exit(0)\n"
        "    kids.append(pid)\n"
        "print([os.waitstatus_to_exitcode(os.waitpid(k, 0)[1]) for k in kids])\n"
    )
    res = run_sandboxed([sys.executable, "-c", code], cwd=tmp_path / "job",
                        limits=Limits(wall_s=60, address_space_mb=384))
    codes = json.loads(res.stdout.strip().splitlines()[-1])
    assert any(c != 0 for c in codes), codes
    assert "memory cgroup (at most 384 MB" in res.isolation["cgroup"]


def test_a_code_running_job_writes_nothing_to_the_host_disk(tmp_path: Path) -> None:
    """pytest and acceptance run with their directory as a bounded scratch tmpfs: a job filling it hits the
    bound inside, the host directory keeps exactly the files the forge put there, and those stay read-only."""
    box = tmp_path / "job"
    (box / "skills").mkdir(parents=True)
    (box / "skills" / "x.py").write_text("print('x')\n")
    code = (
        "import os\n"
        "written = 0\n"
        "try:\n"
        "    for i in range(100):\n"
        "        with open(f'fill-{i}', 'wb') as fh:\n"
        "            fh.write(b'x' * (8 * 1024 * 1024))\n"
        "        written += 8\n"
        "except OSError as err:\n"
        "    print('stopped', written, err.errno)\n"
        "try:\n"
        "    open('skills/x.py', 'w').write('tampered')\n"
        "except OSError as err:\n"
        "    print('skill file', err.errno)\n"
    )
    res = run_warm([sys.executable, "-c", code], cwd=box, limits=Limits(wall_s=60, scratch_mb=64), scratch=True)
    assert "stopped" in res.stdout and "skill file" in res.stdout, (res.stdout, res.stderr)
    assert sorted(p.name for p in box.rglob("*") if p.is_file()) == ["x.py"]
    assert (box / "skills" / "x.py").read_text() == "print('x')\n"
    assert "tmpfs of 64 MB" in res.isolation["mount"]
