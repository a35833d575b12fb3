"""Gate slots (kavi/sandbox/slots.py): at most N builds of a machine run their gates at once, a killed holder
frees its slot, waiters are served in turn, and a folder someone else controls is never used."""

import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from kavi.sandbox.slots import gate_slot, gate_slots_setting, usable_cpus
from kavi.settings import KaviSettings, config_problems
from kavi.settings_parsers import GATE_SLOTS_ENV, ConfigError

HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from kavi.sandbox.slots import gate_slot
    folder, count, name = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    with gate_slot(count, folder) as waited:
        print(f"{name} got {time.time():.6f}", flush=True)
        sys.stdin.readline()  # hold the slot until the test writes a line (or closes stdin)
    print(f"{name} left {time.time():.6f}", flush=True)
""")


def _holder(folder: Path, name: str, count: int = 1) -> "subprocess.Popen[str]":
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), str(count), name], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def _got(proc: "subprocess.Popen[str]", timeout_s: float = 20.0) -> float:
    """Wait for the holder's `got` line; its time."""
    assert proc.stdout is not None
    result: list[str] = []
    reader = threading.Thread(target=lambda: result.append(proc.stdout.readline() if proc.stdout else ""))
    reader.start()
    reader.join(timeout_s)
    assert result and " got " in result[0], f"no slot within {timeout_s}s: {result}"
    return float(result[0].split()[-1])


def _release(proc: "subprocess.Popen[str]") -> None:
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    proc.stdin.close()
    proc.wait(20)


def _waits(folder: Path, count: int, hold_s: float = 0.0) -> float:
    with gate_slot(count, folder) as waited:
        time.sleep(hold_s)
    return waited


def _blocked_until_released(folder: Path, count: int, holder: "subprocess.Popen[str]", why: str) -> list[float]:
    """A build in a thread asks for one of `count` slots: it must still wait after 0.5 s; then `holder` leaves and
    the build gets its slot. Returns [seconds it waited] (empty if it never got one)."""
    box: list[float] = []
    t = threading.Thread(target=lambda: box.append(_waits(folder, count)))
    t.start()
    t.join(0.5)
    assert t.is_alive(), why
    _release(holder)
    t.join(20)
    return box


def test_one_slot_makes_the_second_build_wait_for_the_first(tmp_path: Path) -> None:
    first = _holder(tmp_path, "first")
    try:
        _got(first)
        box = _blocked_until_released(tmp_path, 1, first,
                                      "the second build took the only slot while the first held it")
        assert box and box[0] >= 0.4
    finally:
        first.kill()


def test_two_slots_admit_two_at_once(tmp_path: Path) -> None:
    a, b = _holder(tmp_path, "a", 2), _holder(tmp_path, "b", 2)
    try:
        _got(a)
        _got(b)
        t0 = time.monotonic()
        box = _blocked_until_released(tmp_path, 2, a, "a third build ran beside two holders of two slots")
        assert box and time.monotonic() - t0 >= 0.4
    finally:
        a.kill()
        b.kill()
        b.wait(20)


def test_a_killed_holder_frees_its_slot(tmp_path: Path) -> None:
    holder = _holder(tmp_path, "killed")
    _got(holder)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(20)
    t0 = time.monotonic()
    assert _waits(tmp_path, 1) < 5.0
    assert time.monotonic() - t0 < 5.0


def test_a_waiter_is_served_before_a_newcomer(tmp_path: Path) -> None:
    """The first build holds the slot; the second waits; a third arrives. When the first leaves, the second gets
    the slot, not the third (every taker passes the waiting room, even one that would find a slot free)."""
    first = _holder(tmp_path, "first")
    second = third = None
    try:
        _got(first)
        second = _holder(tmp_path, "second")
        time.sleep(1.0)  # the second is in the waiting room, polling
        third = _holder(tmp_path, "third")
        time.sleep(1.0)  # the third waits to enter the room
        _release(first)
        t_second = _got(second)
        time.sleep(0.3)
        assert third.poll() is None
        _release(second)
        t_third = _got(third)
        assert t_second < t_third
        _release(third)
    finally:
        for p in (first, second, third):
            if p is not None:
                p.kill()
                p.wait(20)


def test_a_slot_within_a_slot_does_not_wait(tmp_path: Path) -> None:
    with gate_slot(1, tmp_path) as outer, gate_slot(1, tmp_path) as inner:  # the same build's nested verification
        assert inner == 0.0
    assert outer < 1.0
    assert _waits(tmp_path, 1) < 1.0  # and the slot is free again afterwards


def test_zero_slots_is_no_limit_and_touches_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "slots"
    with gate_slot(0, folder) as waited, gate_slot(0, folder):
        assert waited == 0.0
    assert not folder.exists()


def test_the_slot_descriptor_is_not_inherited_by_gate_processes(tmp_path: Path) -> None:
    with gate_slot(1, tmp_path):
        # A process started while the slot is held (as a gate's sandboxed job is) holds no descriptor of it.
        out = subprocess.run(["ls", "-l", "/proc/self/fd/"], capture_output=True, text=True, check=True).stdout
        assert str(tmp_path) not in out
    assert _waits(tmp_path, 1) < 1.0


@pytest.mark.parametrize("kind", ["symlink", "open to others"])
def test_a_folder_this_user_does_not_control_is_not_used(tmp_path: Path, kind: str,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    folder = tmp_path / "slots"
    if kind == "symlink":
        folder.symlink_to(target)
    else:
        folder.mkdir()
        folder.chmod(0o777)
    with caplog.at_level(logging.WARNING, logger="kavi.sandbox.slots"), \
            gate_slot(1, folder) as waited, gate_slot(1, folder):
        assert waited == 0.0
    assert "no limit" in caplog.text
    assert list(target.iterdir()) == []  # nothing written through the link


def test_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert gate_slots_setting(KaviSettings.from_environ({})) == usable_cpus()
    assert gate_slots_setting(KaviSettings.from_environ({GATE_SLOTS_ENV: "0"})) == 0
    assert gate_slots_setting(KaviSettings.from_environ({GATE_SLOTS_ENV: " 3 "})) == 3
    for bad in ("-1", "two", "1.5", "100000"):
        with pytest.raises(ConfigError, match=GATE_SLOTS_ENV):
            gate_slots_setting(KaviSettings.from_environ({GATE_SLOTS_ENV: bad}))
        assert any(GATE_SLOTS_ENV in p for p in config_problems({GATE_SLOTS_ENV: bad}))
