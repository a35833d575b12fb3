"""A forge killed with SIGKILL no longer stalls the queue or leaves its attempt open.

The CLI tags every run with its pid, host and process start; a sweep (before each `kavi forge`, in
`kavi doctor --fix`, and in the stale_run_sweep sensor) marks runs of dead processes failed, closes the attempts
they left in PACKET/BUILT as ABANDONED without a model outcome, and removes their sandboxes.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml
from dagster._core.test_utils import create_run_for_test
from typer.testing import CliRunner

from kavi.forge.build import run_build
from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.forge.packet import prepare_packet
from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.lifecycle import ProposalStatus
from kavi.process_owner import ProcessOwner, process_start
from kavi.proposals.model import load_proposal
from kavi_assets.cli.dagster_env import dagster_yaml, ensure_dagster_home
from kavi_assets.cli.main import app
from resources.home import SkillsHomeResource
from sensors.sweep import stale_run_sweep, sweep
from tests.factories import REPO

ROOT = REPO
EXAMPLES = ROOT / "kavi" / "examples" / "proposals"
KAVI = Path(sys.executable).with_name("kavi")


def _dead_owner() -> ProcessOwner:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    owner = ProcessOwner(proc.pid, ProcessOwner.current().host, process_start(proc.pid))
    proc.kill()
    proc.wait()
    return owner


@pytest.fixture()
def instance(kavi_home: KaviHome) -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


def _open_attempt(kavi_home: KaviHome, run_id: str, *, built: bool) -> tuple[ForgeContext, str]:
    """An attempt as a killed process leaves it: packet (and sandbox) written, never verified."""
    ctx = ForgeContext.open(kavi_home, lambda: None)  # type: ignore[arg-type, return-value]
    intake(ctx, load_proposal(EXAMPLES / "word_count.yaml"), None)
    from resources.llm import LLMResource

    ctx.llm_factory = LLMResource().get_client
    packet = prepare_packet(ctx, "word_count", run_id)
    if built:
        out = run_build(ctx, "word_count", run_id)
        assert out.ok
        assert (kavi_home.sandboxes_dir / packet.build_id).is_dir()
    return ctx, packet.build_id


def test_the_dagster_yaml_kavi_writes_turns_run_monitoring_on(tmp_path: Path, kavi_home: KaviHome,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dh"))
    path = ensure_dagster_home(kavi_home)
    cfg = yaml.safe_load((path / "dagster.yaml").read_text())
    assert cfg["run_monitoring"]["enabled"] is True
    assert cfg["run_coordinator"]["config"]["max_concurrent_runs"] == 2
    with dg.DagsterInstance.get() as inst:  # the pinned Dagster accepts every setting
        assert inst.run_monitoring_enabled
        assert inst.run_monitoring_max_runtime_seconds > 0
    # The file an earlier kavi wrote (no monitoring) is brought up to date; a person's own file is left alone.
    old = dagster_yaml(path).split("run_monitoring:")[0]
    (path / "dagster.yaml").write_text(old)
    ensure_dagster_home(kavi_home)
    assert (path / "dagster.yaml").read_text() == dagster_yaml(path)
    (path / "dagster.yaml").write_text(old + "# mine\n")
    ensure_dagster_home(kavi_home)
    assert (path / "dagster.yaml").read_text() == old + "# mine\n"


def test_owner_tags_tell_a_dead_process_from_a_live_one() -> None:
    me = ProcessOwner.current()
    assert me.alive() is True
    assert ProcessOwner.from_tags(me.tags()) == me
    assert _dead_owner().alive() is False
    assert ProcessOwner(me.pid, me.host, "1").alive() is False  # same pid, another process start: reused
    assert ProcessOwner(me.pid, "another-host", me.start).alive() is None  # not judged from here
    assert ProcessOwner.from_tags({}) is None


def test_sweep_fails_only_runs_whose_process_is_gone(kavi_home: KaviHome, instance: dg.DagsterInstance) -> None:
    dead = create_run_for_test(instance, job_name="forge", status=dg.DagsterRunStatus.STARTED,
                               tags={**_dead_owner().tags(), "dagster/partition": "word_count"})
    live = create_run_for_test(instance, job_name="forge", status=dg.DagsterRunStatus.STARTED,
                               tags=ProcessOwner.current().tags())
    elsewhere = create_run_for_test(instance, job_name="forge", status=dg.DagsterRunStatus.STARTED,
                                    tags={**_dead_owner().tags(), "kavi/host": "another-host"})
    untagged = create_run_for_test(instance, job_name="forge", status=dg.DagsterRunStatus.STARTED)
    found = sweep(kavi_home, instance, fix=False)
    assert [r.run_id for r in found.stale_runs] == [dead.run_id]
    assert instance.get_run_by_id(dead.run_id).status is dg.DagsterRunStatus.STARTED  # type: ignore[union-attr]
    fixed = sweep(kavi_home, instance, fix=True)
    assert [r.run_id for r in fixed.stale_runs] == [dead.run_id]
    status = {r.run_id: r.status for r in instance.get_runs()}
    assert status[dead.run_id] is dg.DagsterRunStatus.FAILURE
    for other in (live, elsewhere, untagged):
        assert status[other.run_id] is dg.DagsterRunStatus.STARTED
    assert sweep(kavi_home, instance, fix=True).clean


def test_an_abandoned_attempt_is_closed_without_charging_the_model(kavi_home: KaviHome,
                                                                    instance: dg.DagsterInstance) -> None:
    ctx, build_id = _open_attempt(kavi_home, "run-killed", built=True)
    assert ctx.records.require_proposal("word_count").status is ProposalStatus.BUILT
    (kavi_home.sandboxes_dir / "orphan-a1-deadbeef").mkdir()  # a sandbox no build in the ledger knows
    found = sweep(kavi_home, instance, fix=False)
    assert [a.build_id for a in found.abandoned] == [build_id]
    assert {p.name for p in found.leaked_sandboxes} == {"orphan-a1-deadbeef"}
    fixed = sweep(kavi_home, instance, fix=True)
    assert [a.build_id for a in fixed.abandoned] == [build_id]
    build = ctx.records.get_build(build_id)
    assert build is not None and build.status == "ABANDONED" and build.failure_kind is None
    assert ctx.records.model_outcomes() == []  # the learner is not charged
    assert not (kavi_home.sandboxes_dir / build_id).exists()
    assert not (kavi_home.sandboxes_dir / "orphan-a1-deadbeef").exists()
    row = ctx.records.require_proposal("word_count")
    assert row.status is ProposalStatus.PROPOSED
    assert ctx.records.list_status("word_count")[0]["build_status"] == "ABANDONED"
    # The next attempt follows it.
    assert prepare_packet(ctx, "word_count", "run-next").attempt == 2


def test_an_attempt_whose_lock_is_held_is_not_abandoned(kavi_home: KaviHome, instance: dg.DagsterInstance) -> None:
    from kavi.forge.locks import attempt_lock

    ctx, build_id = _open_attempt(kavi_home, "run-alive", built=False)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from kavi.forge.locks import attempt_lock\nfrom kavi.home import KaviHome\n"
         "with attempt_lock(KaviHome(Path(sys.argv[1])), 'word_count', run_id='run-alive'):\n"
         "    print('held', flush=True); time.sleep(60)\n", str(kavi_home.root)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert sweep(kavi_home, instance, fix=True).abandoned == []
        assert ctx.records.get_build(build_id).status == "PACKET"  # type: ignore[union-attr]
    finally:
        holder.kill()
        holder.wait()
    with attempt_lock(kavi_home, "word_count", wait_s=5):
        pass
    assert [a.build_id for a in sweep(kavi_home, instance, fix=True).abandoned] == [build_id]


def test_the_sweep_sensor_marks_stale_runs_failed(kavi_home: KaviHome, instance: dg.DagsterInstance) -> None:
    dead = create_run_for_test(instance, job_name="forge", status=dg.DagsterRunStatus.STARTED,
                               tags=_dead_owner().tags())
    ctx = dg.build_sensor_context(instance=instance, resources={"home": SkillsHomeResource(root=str(kavi_home.root))})
    result = stale_run_sweep(ctx)
    assert isinstance(result, dg.SkipReason) and "1 stale run(s) marked failed" in str(result.skip_message)
    assert instance.get_run_by_id(dead.run_id).status is dg.DagsterRunStatus.FAILURE  # type: ignore[union-attr]


def test_kavi_doctor_reports_each_with_its_fix(kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    from kavi_assets.cli import doctor

    _, build_id = _open_attempt(kavi_home, "run-killed", built=True)
    ensure_dagster_home(kavi_home)
    with dg.DagsterInstance.get() as inst:
        create_run_for_test(inst, job_name="forge", status=dg.DagsterRunStatus.STARTED, tags=_dead_owner().tags())
    (kavi_home.sandboxes_dir / "orphan-a1-deadbeef").mkdir()
    monkeypatch.setattr(doctor, "_tools", lambda: [])  # the gate tools' versions are not what this test is about
    monkeypatch.setattr(doctor, "_endpoint", lambda: doctor.Check("model endpoint", "ok", "recorded"))
    res = CliRunner().invoke(app, ["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(res.output)}
    assert res.exit_code == 1
    assert checks["stale runs"]["status"] == "fail" and "kavi doctor --fix" in checks["stale runs"]["fix"]
    assert checks["abandoned attempts"]["status"] == "warn" and build_id in checks["abandoned attempts"]["detail"]
    assert "kavi doctor --fix" in checks["abandoned attempts"]["fix"]
    assert checks["leaked sandboxes"]["status"] == "warn" and "kavi doctor --fix" in checks["leaked sandboxes"]["fix"]
    res = CliRunner().invoke(app, ["doctor", "--fix"])
    assert res.exit_code == 0, res.output
    assert "1 stale run(s) marked failed" in res.output and "1 attempt(s) closed as ABANDONED" in res.output
    assert "stale runs: no run is STARTED" in res.output


# -- the real thing: a `kavi forge` killed with SIGKILL ----------------------------------------------------------


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAVI_", "DAGSTER_"))}
    # The recorded model's latency stays on, so the kill lands while the attempt is open.
    env.update(KAVI_HOME=str(tmp_path / "home"), DAGSTER_HOME=str(tmp_path / "dagster"), KAVI_RECORDED_SPEED="1")
    return env


def _kavi(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KAVI), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _instance(tmp_path: Path) -> Any:
    old = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(tmp_path / "dagster")
    try:
        return dg.DagsterInstance.get()
    finally:
        if old is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = old


def _kill_mid_attempt(env: dict[str, str], home: Path, names: tuple[str, ...] = ("word_count",)) -> list[str]:
    """Start `kavi forge NAME` for each name at once; SIGKILL each once its sandbox exists. The builds left."""
    procs = {name: subprocess.Popen([str(KAVI), "forge", name], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True) for name in names}
    left: list[str] = []
    try:
        deadline = time.monotonic() + 300
        while len(left) < len(names):
            assert time.monotonic() < deadline, "no sandbox appeared"
            time.sleep(0.05)
            for build_id in os.listdir(home / "sandboxes"):
                name = build_id.rsplit("-a", 1)[0]
                if name in procs and build_id not in left:
                    assert procs[name].poll() is None, f"the forge of {name} finished before it could be killed"
                    os.kill(procs[name].pid, signal.SIGKILL)
                    procs[name].wait()
                    left.append(build_id)
    finally:
        for proc in procs.values():
            with contextlib.suppress(ProcessLookupError):  # the gate tools it had started (its process group)
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return left


@pytest.mark.slow
def test_a_forge_killed_with_sigkill_is_swept_and_the_next_run_goes_through(tmp_path: Path) -> None:
    env, home = _env(tmp_path), tmp_path / "home"
    assert _kavi(["propose", str(EXAMPLES / "word_count.yaml")], env).returncode == 0
    [build_id] = _kill_mid_attempt(env, home)

    with _instance(tmp_path) as inst:
        [run] = inst.get_runs()
        assert run.status is dg.DagsterRunStatus.STARTED  # Dagster alone would keep it so, holding a run slot
        assert run.tags["kavi/pid"].isdigit() and run.tags["kavi/host"]
    records = ForgeRecords(Ledger(home / "ledger.duckdb"))
    assert records.get_build(build_id).status in ("PACKET", "BUILT")  # type: ignore[union-attr]

    doctor = _kavi(["doctor", "--json"], env)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert doctor.returncode == 1
    assert checks["stale runs"]["status"] == "fail" and run.run_id[:8] in checks["stale runs"]["detail"]
    assert build_id in checks["abandoned attempts"]["detail"]
    for name in ("stale runs", "abandoned attempts"):
        assert checks[name]["fix"].startswith("kavi doctor --fix")

    # The next forge sweeps before it launches: the dead run fails, the attempt is ABANDONED, the sandbox goes,
    # and the new attempt runs to its end.
    out = _kavi(["forge", "word_count", "--json"], env)
    result = json.loads(out.stdout)
    assert result["attempt"] == 2 and not result["errors"], result
    # --json exits as the verdict says: 0 only for VERIFIED or TRUSTED.
    assert out.returncode == (0 if result["status"] in ("VERIFIED", "TRUSTED") else 1), (result, out.stderr)
    with _instance(tmp_path) as inst:
        status = {r.run_id: r.status for r in inst.get_runs()}
        assert status[run.run_id] is dg.DagsterRunStatus.FAILURE
        assert status[result["run_id"]] in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE)
        in_progress = inst.get_runs_count(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED,
                                                                  dg.DagsterRunStatus.STARTING]))
        assert in_progress == 0  # no slot of max_concurrent_runs is held by the dead run
    build = records.get_build(build_id)
    assert build is not None and build.status == "ABANDONED"
    assert build_id not in {o["build_id"] for o in records.model_outcomes()}
    assert not (home / "sandboxes" / build_id).exists()
    assert [b.attempt_number for b in records.builds("word_count")] == [1, 2]
    doctor = _kavi(["doctor", "--json"], env)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert {checks[n]["status"] for n in ("stale runs", "abandoned attempts", "leaked sandboxes")} == {"ok"}


@pytest.mark.slow
@pytest.mark.daemon
def test_queued_runs_launch_after_two_killed_forges(tmp_path: Path) -> None:
    """Two forges killed at once fill max_concurrent_runs: 2. Under dagster-daemon, the stale_run_sweep sensor
    marks their runs failed, and a run the intake sensor queues afterwards is launched."""
    env, home = _env(tmp_path), tmp_path / "home"
    for name in ("word_count", "slugify_title"):
        assert _kavi(["propose", str(EXAMPLES / f"{name}.yaml")], env).returncode == 0
    left = _kill_mid_attempt(env, home, ("word_count", "slugify_title"))
    with _instance(tmp_path) as inst:
        assert inst.get_runs_count(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])) == 2
    exe = Path(sys.executable).with_name("dagster-daemon")
    log = (tmp_path / "daemon.log").open("w")
    daemon = subprocess.Popen([str(exe), "run", "-m", "kavi_assets.definitions"], env=env, cwd=tmp_path,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        (home / "inbox" / "parse_duration.yaml").write_text((EXAMPLES / "parse_duration.yaml").read_text())
        deadline = time.monotonic() + 300
        while True:
            time.sleep(3)
            with _instance(tmp_path) as inst:
                runs = inst.get_runs()
            launched = [r for r in runs if r.tags.get("dagster/partition") == "parse_duration"
                        and r.status not in (dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED)]
            if launched:
                break
            if time.monotonic() > deadline:
                pytest.fail(f"no run launched: {[(r.tags.get('dagster/partition'), r.status) for r in runs]}\n"
                            + (tmp_path / "daemon.log").read_text()[-3000:])
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait(10)
        log.close()
    killed = [r for r in runs if r.tags.get("dagster/partition") in ("word_count", "slugify_title")]
    assert [r.status for r in killed] == [dg.DagsterRunStatus.FAILURE] * 2
    records = ForgeRecords(Ledger(home / "ledger.duckdb"))
    assert {records.get_build(b).status for b in left} == {"ABANDONED"}  # type: ignore[union-attr]
