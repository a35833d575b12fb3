"""The code location loads, and its asset keys, checks, jobs and sensors are the ones the docs name."""

import subprocess
import sys

import dagster as dg
import pytest

from kavi.home import KaviHome
from kavi.verdicts import ALL_GATES
from kavi_assets.definitions import defs
from tests.factories import REPO


def test_definitions_load_with_expected_keys() -> None:
    repo = defs.get_repository_def()
    keys = {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()}
    assert {
        "forge/proposal",
        "forge/build_packet",
        "forge/skill_build",
        "forge/verification_report",
        "forge/research_note",
        "forge/registry_entry",
        "forge/skill_registry",
        "forge/model_posteriors",
        "forge/trust_audit",
        "forge/execution_log",
    } <= keys
    checks = {c.name for c in repo.asset_graph.asset_check_keys}
    assert {f"gate_{g}" for g in ALL_GATES} | {"trust_intact", "still_trusted"} == checks
    for job in ("forge", "promote", "registry", "learn", "trust_audit", "ingest_executions"):
        assert defs.resolve_job_def(job) is not None
    sensors = {s.name for s in repo.sensor_defs}
    assert {"proposal_intake", "retry_failed_attempts", "learn_model_outcomes", "promote_approved",
            "refresh_registry"} <= sensors
    assert {s.name for s in repo.schedule_defs} == {"hourly_trust_audit", "ingest_execution_log"}


def test_gate_checks_judge_the_report_per_partition() -> None:
    """One check per gate on the report, scoped to the proposal's partition. They block promotion through
    registry_entry, not through Dagster's `blocking` flag (whose failure is a stack trace): that promotion is blocked
    is tested by running the forge job in tests/dagster/test_forge_checks.py."""
    from kavi_assets.assets.forge import GATE_CHECKS
    from kavi_assets.assets.partitions import proposals_partitions

    assert {spec.asset_key for spec in GATE_CHECKS} == {dg.AssetKey(["forge", "verification_report"])}
    assert all(spec.partitions_def == proposals_partitions for spec in GATE_CHECKS)


def test_the_location_binds_the_variables_set_when_it_loads_and_a_run_here_those_set_now(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Dagster's load binds each resource setting whose variable is set (dg.EnvVar: the UI shows it); a run this
    process executes itself is bound to the variables set when it runs, not to those of the first import."""
    from kavi_assets import definitions as location

    monkeypatch.delenv("KAVI_LLM_BASE_URL", raising=False)
    unset = location.current_definitions()
    assert unset.resources["llm"].base_url is None
    monkeypatch.setenv("KAVI_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    bound = location.current_definitions()
    assert isinstance(bound.resources["llm"].base_url, dg.EnvVar)
    assert bound.resources["llm"].base_url.env_var_name == "KAVI_LLM_BASE_URL"
    assert location.current_definitions() is bound  # built once per set of variables
    monkeypatch.delenv("KAVI_LLM_BASE_URL")
    assert location.current_definitions() is unset
    assert location._definitions_for(location._LOADED) is location.defs  # the loaded location, when nothing changed


@pytest.mark.slow
def test_a_variable_unset_after_the_first_import_does_not_fail_the_next_run(kavi_home: KaviHome) -> None:
    """The definitions first imported with KAVI_LLM_BASE_URL set, then the variable unset (as a test's monkeypatch
    undoes it): a job the CLI runs in process still succeeds."""
    code = ("import os\n"
            "os.environ['KAVI_LLM_BASE_URL'] = 'http://127.0.0.1:9/v1'\n"
            "os.environ['KAVI_LLM_MODELS'] = 'offline-model'\n"
            "import kavi_assets.definitions\n"
            "del os.environ['KAVI_LLM_BASE_URL'], os.environ['KAVI_LLM_MODELS']\n"
            "from kavi.home import KaviHome\n"
            "from kavi_assets.cli.dagster_env import ensure_dagster_home, run_job\n"
            "ensure_dagster_home(KaviHome.from_env())\n"
            "out = run_job('learn', None)\n"
            "print('success' if out.success else out.errors)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "success", proc.stdout[-2000:]
