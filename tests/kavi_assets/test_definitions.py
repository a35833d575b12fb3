"""The code location loads, and its asset keys, checks, jobs and sensors are the ones the docs name."""

import dagster as dg

from kavi.verdicts import ALL_GATES
from kavi_assets.definitions import defs


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
