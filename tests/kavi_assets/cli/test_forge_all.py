"""Proposals forged 4 at once through Dagster's queue into one home give the
verdicts of a sequential run, one recorded attempt per run, a clean `kavi verify` and no lock error."""

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from kavi.home import KaviHome
from kavi.settings import ConfigError, KaviSettings
from kavi_assets.cli.dagster_env import configure_queue, dagster_yaml, render_dagster_yaml
from kavi_assets.cli.parallel import endpoint_tag, queue_settings
from tests.factories import REPO

EXAMPLES = REPO / "kavi" / "examples" / "proposals"
NAMES = ["create_daily_note", "extract_emails", "parse_duration", "read_notes_by_tag", "slugify_title", "word_count"]


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAVI_", "DAGSTER_"))}
    env.update(KAVI_HOME=str(root / "home"), DAGSTER_HOME=str(root / "dagster"), KAVI_RECORDED_SPEED="0")
    return env


def _kavi(args: list[str], env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kavi_assets.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _propose(env: dict[str, str]) -> None:
    for n in NAMES:
        proc = _kavi(["propose", str(EXAMPLES / f"{n}.yaml")], env)
        assert proc.returncode == 0, proc.stderr


def _verdicts(env: dict[str, str]) -> dict[str, tuple[str, str | None]]:
    proc = _kavi(["status", "--json"], env)
    assert proc.returncode == 0, proc.stderr
    return {r["name"]: (r["status"], r["failure_kind"]) for r in json.loads(proc.stdout)}


def test_queue_settings_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    assert queue_settings(None, {}).max_runs == 2
    assert queue_settings(8, {}).max_runs == 8
    assert queue_settings(None, {"KAVI_MAX_CONCURRENT_RUNS": "4", "KAVI_ENDPOINT_CONCURRENCY": "3"}) \
        .endpoint_limit == 3
    for bad in (0, 65, -1):
        with pytest.raises(ConfigError, match="KAVI_MAX_CONCURRENT_RUNS"):
            queue_settings(bad, {})
    with pytest.raises(ConfigError, match="KAVI_ENDPOINT_CONCURRENCY"):
        queue_settings(None, {"KAVI_ENDPOINT_CONCURRENCY": "many"})
    assert endpoint_tag(KaviSettings.from_environ({})) == "recorded-model"
    assert endpoint_tag(KaviSettings.from_environ({"KAVI_LLM_BASE_URL": "https://user:pw@API.example.org:8443/v1?k=1",
                                                   "KAVI_LLM_MODELS": "m"})) == "api.example.org:8443"


def test_dagster_yaml_gets_the_limits_unless_a_person_wrote_it(tmp_path: Path) -> None:
    (tmp_path / "dagster.yaml").write_text(dagster_yaml(tmp_path))  # what `kavi` writes first: taken as kavi's own
    assert configure_queue(tmp_path, 8, 3)
    text = (tmp_path / "dagster.yaml").read_text()
    assert "max_concurrent_runs: 8\n" in text and "key: kavi/endpoint" in text and "limit: 3\n" in text
    import yaml

    coordinator = yaml.safe_load(text)["run_coordinator"]["config"]
    assert coordinator["max_concurrent_runs"] == 8 and coordinator["dequeue_interval_seconds"] == 1
    assert coordinator["tag_concurrency_limits"] == [
        {"key": "kavi/endpoint", "value": {"applyLimitPerUniqueValue": True}, "limit": 3}]
    assert configure_queue(tmp_path, 4, None)  # kavi's own file: rewritten
    assert (tmp_path / "dagster.yaml").read_text() == render_dagster_yaml(tmp_path, 4, None)
    (tmp_path / "dagster.yaml").write_text(render_dagster_yaml(tmp_path, 4, None) + "# mine\n")
    assert not configure_queue(tmp_path, 8, None)
    assert (tmp_path / "dagster.yaml").read_text().endswith("# mine\n")


def test_forge_usage_errors(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert _kavi(["forge"], env).returncode == 2
    both = _kavi(["forge", "word_count", "--all"], env)
    assert both.returncode == 2 and "not both" in both.stderr
    bad = _kavi(["forge", "--all", "--concurrency", "0"], env)
    assert bad.returncode == 2 and "KAVI_MAX_CONCURRENT_RUNS" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.slow
@pytest.mark.daemon
def test_four_concurrent_runs_match_a_sequential_forge(tmp_path: Path) -> None:
    # The sequential reference is the same batch one run at a time: a batch routes on the outcomes recorded before
    # it (kavi/forge/batch.py), where `kavi forge NAME` after `kavi forge OTHER` routes on OTHER's outcome too.
    seq, par = _env(tmp_path / "seq"), _env(tmp_path / "par")
    _propose(seq)
    proc = _kavi(["forge", "--all", "--concurrency", "1", "--json"], seq)
    assert proc.returncode in (0, 1) and proc.stdout.startswith("["), proc.stderr[-3000:]
    _propose(par)
    proc = _kavi(["forge", "--all", "--concurrency", "4", "--json"], par)
    outs = json.loads(proc.stdout)
    # --json exits as without it: 1 when any attempt's verdict is against it.
    against = any(o["status"] not in ("VERIFIED", "TRUSTED") for o in outs)
    assert proc.returncode == (1 if against else 0), proc.stderr[-3000:]
    assert sorted(o["name"] for o in outs) == NAMES
    assert all(not o["errors"] for o in outs), outs
    assert "lock" not in proc.stderr.lower(), proc.stderr

    assert _verdicts(par) == _verdicts(seq)
    assert {o["name"]: o["status"] for o in outs} == {n: v[0] for n, v in _verdicts(par).items()}
    con = duckdb.connect(str(tmp_path / "par" / "home" / "ledger.duckdb"), read_only=True)
    try:
        rows = con.execute("SELECT proposal_name, attempt_number, run_id FROM builds").fetchall()
        endpoints = {r[0] for r in con.execute("SELECT endpoint FROM builds").fetchall()}
    finally:
        con.close()
    # One recorded-model server for the batch, shown as the recorded model in every run (not one per run worker).
    assert len(endpoints) == 1 and str(next(iter(endpoints))).startswith("recorded model (replay"), endpoints
    # Every run made exactly one attempt, recorded once: attempt 1 of each proposal, under its own run id.
    assert sorted((r[0], r[1]) for r in rows) == [(n, 1) for n in NAMES]
    assert {r[2] for r in rows} == {o["run_id"] for o in outs}
    # The runs did overlap: Dagster dequeued them with up to 4 at once.
    import dagster as dg

    os.environ["DAGSTER_HOME"] = par["DAGSTER_HOME"]
    try:
        with dg.DagsterInstance.get() as inst:
            spans = [(r.start_time, r.end_time) for r in inst.get_run_records(dg.RunsFilter(job_name="forge"))]
            tags = [r.dagster_run.tags for r in inst.get_run_records(dg.RunsFilter(job_name="forge"))]
    finally:
        os.environ.pop("DAGSTER_HOME", None)
    assert len(spans) == len(NAMES) and all(t.get("kavi/endpoint") == "recorded-model" for t in tags)
    # Every run worker was forked from the preloaded run host (kavi_assets/launcher), each its own process.
    assert all(t.get("kavi/run_worker") == "prefork" for t in tags), tags
    assert len({t.get("kavi/pid") for t in tags}) == len(NAMES)
    peak = max(sum(1 for s, e in spans if s is not None and e is not None and s <= t < e)
               for t, _ in spans if t is not None)
    assert 2 <= peak <= 4, spans
    verify = _kavi(["verify"], par)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_batch_nobody_dequeues_is_reported_and_cancelled(kavi_home: object, tmp_path: Path) -> None:
    """With no daemon taking the runs, the command says so (one line, exit 2) instead of waiting for hours, and the
    runs it queued are cancelled rather than left for some later daemon to start."""
    import dagster as dg

    from kavi_assets.cli.dagster_env import add_partition, instance
    from kavi_assets.cli.parallel import QueueStalled, RunSubmitter, _cancel_queued, wait_for_runs

    add_partition("word_count")
    submitter = RunSubmitter()
    try:
        run_id = submitter.submit("forge", "word_count", {"kavi/trigger": "test"})
    finally:
        submitter.close()
    inst = instance()
    assert inst.get_run_by_id(run_id).status == dg.DagsterRunStatus.QUEUED
    with pytest.raises(QueueStalled, match="no daemon took the 1 queued run"):
        wait_for_runs(inst, [run_id], stall_s=0.5)
    _cancel_queued([run_id])
    assert inst.get_run_by_id(run_id).status == dg.DagsterRunStatus.CANCELED


def test_a_batch_naming_an_unknown_proposal_starts_nothing(kavi_home: KaviHome, tmp_path: Path) -> None:
    from kavi.ledger.records import LedgerRecordError
    from kavi_assets.cli.parallel import QueuedForge, QueueSettings, forge_queued

    env = _env(tmp_path)
    proc = _kavi(["propose", str(EXAMPLES / "word_count.yaml")], env)
    assert proc.returncode == 0, proc.stderr
    with pytest.raises(LedgerRecordError, match="no proposal named 'nope'"):
        forge_queued(kavi_home, [QueuedForge("word_count", {}), QueuedForge("nope", {})], QueueSettings(2, None))
    # Checked before the daemon, the partitions or any run: nothing was queued.
    assert not (tmp_path / "dagster" / "logs" / "kavi-queue-daemon.log").exists()
    import dagster as dg

    with dg.DagsterInstance.get() as inst:
        assert inst.get_run_records() == []
        assert "nope" not in inst.get_dynamic_partitions("proposals")
