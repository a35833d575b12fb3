"""The same proposal forged twice at once makes one attempt per forge, one after the other.

An advisory lock per proposal (fcntl, under the home) is held around an attempt; the later caller waits (bounded)
or is told who is forging. The lock dies with its holder.
"""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.forge.locks import ProposalBusy, attempt_lock, is_free, lock_path
from kavi.home import KaviHome
from kavi.proposals.model import load_proposal
from kavi_assets.cli.main import app
from tests.factories import REPO

ROOT = REPO
EXAMPLES = ROOT / "kavi" / "examples" / "proposals"
KAVI = Path(sys.executable).with_name("kavi")

HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from kavi.forge.locks import attempt_lock
    from kavi.home import KaviHome
    with attempt_lock(KaviHome(Path(sys.argv[1])), sys.argv[2], run_id=sys.argv[3]):
        print("held", flush=True)
        time.sleep(120)
""")


@pytest.fixture()
def holder(kavi_home: KaviHome) -> Iterator[Any]:
    """Start a process that holds an attempt lock until it is killed."""
    procs: list[subprocess.Popen[str]] = []

    def start(name: str, run_id: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(kavi_home.root), name, run_id],
                                stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_the_lock_names_its_holder_and_dies_with_it(kavi_home: KaviHome, holder: Any) -> None:
    proc = holder("word_count", "run-abc123")
    assert not is_free(kavi_home, "word_count")
    assert is_free(kavi_home, "slugify_title")  # one lock per proposal
    started = time.monotonic()
    with pytest.raises(ProposalBusy) as err, attempt_lock(kavi_home, "word_count", wait_s=0.5):
        pass
    assert time.monotonic() - started < 5
    assert str(err.value) == (f"word_count is being forged by pid {proc.pid} (run run-abc123); "
                              "try again when it finishes")
    proc.kill()  # SIGKILL: no clean-up runs, the kernel releases the lock
    proc.wait()
    with attempt_lock(kavi_home, "word_count", wait_s=5):
        assert lock_path(kavi_home, "word_count").exists()


def test_a_waiting_caller_gets_the_lock_when_the_holder_finishes(kavi_home: KaviHome) -> None:
    order: list[str] = []
    entered = threading.Event()

    def first() -> None:
        with attempt_lock(kavi_home, "word_count", run_id="first"):
            entered.set()
            time.sleep(0.5)
            order.append("first done")

    t = threading.Thread(target=first)
    t.start()
    entered.wait(5)
    waits: list[str] = []
    with attempt_lock(kavi_home, "word_count", wait_s=10, on_wait=lambda busy: waits.append(str(busy))):
        order.append("second in")
    t.join()
    assert order == ["first done", "second in"]
    assert waits and f"pid {os.getpid()} (run first)" in waits[0]


def test_the_lock_is_reentrant_for_its_thread(kavi_home: KaviHome) -> None:
    with attempt_lock(kavi_home, "word_count"), attempt_lock(kavi_home, "word_count", run_id="inner", wait_s=0):
        pass
    assert is_free(kavi_home, "word_count")


def test_kavi_forge_is_told_who_is_forging(kavi_home: KaviHome, holder: Any,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = ForgeContext.open(kavi_home, lambda: None)  # type: ignore[arg-type, return-value]
    intake(ctx, load_proposal(EXAMPLES / "word_count.yaml"), None)
    proc = holder("word_count", "run-xyz")
    monkeypatch.setenv("KAVI_FORGE_WAIT_S", "0")
    res = CliRunner().invoke(app, ["forge", "word_count"])
    assert res.exit_code != 0, res.output
    assert (f"word_count is being forged by pid {proc.pid} (run run-xyz); try again when it finishes"
            in res.output), res.output
    assert "Traceback" not in res.output
    assert ctx.records.builds("word_count") == []  # nothing was attempted


def _env(tmp_path: Path, speed: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAVI_", "DAGSTER_"))}
    env.update(KAVI_HOME=str(tmp_path / "home"), DAGSTER_HOME=str(tmp_path / "dagster"), KAVI_RECORDED_SPEED=speed)
    return env


@pytest.mark.slow
def test_two_forges_of_one_proposal_at_once_make_consecutive_attempts(tmp_path: Path) -> None:
    """With --again each forge makes an attempt of its own: never at once, one after the other. (Without it, the
    waiting forge reports the attempt it waited for: tests/kavi_assets/cli/test_forge_waits.py.)"""
    env = _env(tmp_path, "1")  # the recorded model's latency on: the two attempts would overlap
    subprocess.run([str(KAVI), "propose", str(EXAMPLES / "word_count.yaml")], env=env, check=True,
                   capture_output=True, timeout=120)
    procs = [subprocess.Popen([str(KAVI), "forge", "word_count", "--again", "--json"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=600)
        outs.append(json.loads(stdout))
        assert proc.returncode == (0 if outs[-1]["status"] in ("VERIFIED", "TRUSTED") else 1), stderr
    for out in outs:
        # No step crashed (a duplicate attempt fails its run with a LedgerConflictError); a gate's blocking check
        # failing an attempt is an outcome, not an error.
        assert not out["errors"], out
    assert sorted(o["attempt"] for o in outs) == [1, 2]

    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger

    records = ForgeRecords(Ledger(tmp_path / "home" / "ledger.duckdb"))
    builds = records.builds("word_count")
    assert [b.attempt_number for b in builds] == [1, 2]
    # Each forge reports its own attempt: the build of the attempt it printed was made by its run.
    by_attempt = {b.attempt_number: b for b in builds}
    for out in outs:
        assert by_attempt[out["attempt"]].run_id == out["run_id"]
        assert by_attempt[out["attempt"]].build_id == out["build_id"]
    assert builds[1].parent_build_id == builds[0].build_id
    # Serialised: the second attempt began after the first had finished.
    with records.ledger.connect() as con:
        rows = con.execute("SELECT attempt_number, started_at, finished_at FROM builds "
                           "WHERE proposal_name = 'word_count' ORDER BY attempt_number").fetchall()
    assert rows[1][1] >= rows[0][2], rows


def test_a_run_launched_without_the_cli_takes_the_lock_too(kavi_home: KaviHome, holder: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs requested by sensors (or `dagster asset materialize`) hold the lock through their resource."""
    import dagster as dg

    from kavi_assets.definitions import current_definitions

    ctx = ForgeContext.open(kavi_home, lambda: None)  # type: ignore[arg-type, return-value]
    intake(ctx, load_proposal(EXAMPLES / "word_count.yaml"), None)
    proc = holder("word_count", "run-held")
    monkeypatch.setenv("KAVI_FORGE_WAIT_S", "0")
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("proposals", ["word_count"])
        result = current_definitions().resolve_job_def("forge").execute_in_process(
            partition_key="word_count", instance=instance, raise_on_error=False)
        errors = " ".join(str(e.event_specific_data.error) for e in result.all_events  # type: ignore[union-attr]
                          if e.is_failure and getattr(e.event_specific_data, "error", None))
    assert not result.success
    assert f"word_count is being forged by pid {proc.pid} (run run-held)" in errors, errors[:2000]
    assert ctx.records.builds("word_count") == []
