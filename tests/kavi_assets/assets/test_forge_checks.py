"""On the Dagster side: gate checks are scoped to the proposal's partition and say which
skill, attempt and build they judged, with the tool's first messages as plain text; a failed gate is a failed
check that blocks promotion, not a crashed step with a stack trace; and each partition's status is visible.

These run the real forge job in process on the recorded model (a few seconds each)."""

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.forge.promote import NotVerified, promotable_build
from kavi.home import KaviHome
from kavi.proposals.model import load_proposal
from kavi_assets.assets.forge import (
    GATE_CHECKS,
    PROPOSAL_KEY,
    REGISTRY_ENTRY_KEY,
    REPORT_KEY,
    RESEARCH_KEY,
    check_description,
    plain,
)
from tests.factories import REPO

EXAMPLES = REPO / "kavi" / "examples" / "proposals"


@pytest.fixture()
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


def _forge(home: KaviHome, instance: dg.DagsterInstance, name: str) -> tuple[ForgeContext, Any]:
    from kavi_assets.definitions import current_definitions

    ctx = ForgeContext.open(home, lambda: None)  # type: ignore[arg-type, return-value]
    intake(ctx, load_proposal(EXAMPLES / f"{name}.yaml"), None)
    instance.add_dynamic_partitions("proposals", [name])
    result = current_definitions().resolve_job_def("forge").execute_in_process(
        partition_key=name, instance=instance, raise_on_error=False, tags={"kavi/trigger": "test"})
    return ctx, result


def _checks(result: Any) -> dict[str, Any]:
    return {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data
            for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}


def test_gate_checks_are_partitioned_and_not_dagster_blocking() -> None:
    assert {spec.partitions_def for spec in GATE_CHECKS} == {dg.DynamicPartitionsDefinition(name="proposals")}
    # Promotion is blocked by registry_entry reading the verdict (tested below), not by Dagster raising
    # DagsterAssetCheckFailedError, which shows an expected verdict as a crash with a stack trace.
    assert not any(spec.blocking for spec in GATE_CHECKS)


def test_importing_the_definitions_prints_no_preview_warning() -> None:
    import importlib

    import kavi_assets.assets.forge as forge

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        importlib.reload(forge)
    assert not [w for w in seen if issubclass(w.category, dg.PreviewWarning)], [str(w.message) for w in seen]


def test_a_failed_gate_is_a_verdict_that_blocks_promotion_without_a_crash(
        kavi_home: KaviHome, instance: dg.DagsterInstance) -> None:
    # slugify_title's first recorded answer fails a real ruff run (F401).
    ctx, result = _forge(kavi_home, instance, "slugify_title")

    # No step failed: no DagsterAssetCheckFailedError, no stack trace, for an expected verdict.
    failures = [e for e in result.all_events if e.is_failure]
    assert result.success and not failures, [str(e.event_specific_data) for e in failures][:3]
    # ...and the promotion did not happen: nothing materialized for registry_entry, nothing in the ledger.
    materialized = {m.asset_key for m in result.asset_materializations_for_node("registry_entry")}
    assert REGISTRY_ENTRY_KEY not in materialized
    assert ctx.records.trusted("slugify_title") == []
    with pytest.raises(NotVerified):
        promotable_build(ctx, "slugify_title")

    ruff = _checks(result)["gate_ruff"]
    assert not ruff.passed
    assert ruff.partition == "slugify_title"  # scoped: the Checks tab's partition view and history name the skill
    build = ctx.records.latest_build("slugify_title")
    assert build is not None
    desc = ruff.description or ""
    assert desc.startswith("ruff FAILED: 2 finding(s): F401, I001\n\n"), desc
    assert f"slugify_title, attempt 1, build {build.build_id}" in desc
    assert "(/assets/forge/verification_report?view=partitions&partition=slugify_title)" in desc
    # The tool's own first messages, as plain text lines (markdown specials escaped), readable without a click.
    assert "\n- skills/slugify\\_title.py:" in desc and "F401 \\`string\\` imported but unused" in desc, desc
    meta = ruff.metadata
    assert meta["skill"].value == "slugify_title" and meta["attempt"].value == 1
    assert meta["build_id"].value == build.build_id
    assert isinstance(meta["messages"], dg.TextMetadataValue) and "F401" in meta["messages"].value
    assert _checks(result)["gate_mypy"].passed

    # The run's log says which gates failed, what happens next, and where the research note is.
    logs = [e.message for e in instance.all_logs(result.run_id) if e.level >= 30]
    verdict = [m for m in logs if "failed verification" in m]
    assert verdict and "ruff" in verdict[0] and "research note: " in verdict[0], logs
    note_path = verdict[0].rsplit("research note: ", 1)[1].strip()
    assert Path(note_path).is_file() and Path(note_path).is_relative_to(kavi_home.root)
    research = instance.get_latest_materialization_event(RESEARCH_KEY)
    assert research is not None and research.asset_materialization is not None
    assert research.asset_materialization.metadata["note_path"].value == note_path

    # The report and the proposal's partition say FAILED, where the asset pages show it.
    report = instance.get_latest_materialization_event(REPORT_KEY)
    assert report is not None and report.asset_materialization is not None
    assert report.asset_materialization.metadata["verdict"].value.startswith("FAILED (ruff")
    status = _latest_status(instance, "slugify_title")
    assert status.startswith("FAILED (VERIFY_LINT) after attempt 1"), status


def test_a_passing_attempt_reaches_registry_entry_and_its_status_shows(
        kavi_home: KaviHome, instance: dg.DagsterInstance) -> None:
    ctx, result = _forge(kavi_home, instance, "search_notes")
    assert result.success
    assert all(c.passed for c in _checks(result).values())
    assert {c.partition for c in _checks(result).values()} == {"search_notes"}
    entry = instance.get_latest_materialization_event(REGISTRY_ENTRY_KEY)
    assert entry is not None and entry.asset_materialization is not None
    assert entry.asset_materialization.partition == "search_notes"
    row = ctx.records.require_proposal("search_notes")
    assert _latest_status(instance, "search_notes").startswith(row.status.value)
    assert row.status.value in ("VERIFIED", "TRUSTED")


def test_a_promotion_shows_its_skill_card_in_the_ui(kavi_home: KaviHome, instance: dg.DagsterInstance,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_AUTO_APPROVE", "READ_ONLY")
    ctx, result = _forge(kavi_home, instance, "search_notes")
    assert result.success and ctx.records.require_proposal("search_notes").status.value == "TRUSTED"
    entry = instance.get_latest_materialization_event(REGISTRY_ENTRY_KEY)
    assert entry is not None and entry.asset_materialization is not None
    card = str(entry.asset_materialization.metadata["card"].value)
    assert card.startswith("# search_notes@1") and "## Evidence" in card and "- acceptance: passed" in card


def _latest_status(instance: dg.DagsterInstance, partition: str) -> str:
    records = instance.fetch_observations(
        dg.AssetRecordsFilter(asset_key=PROPOSAL_KEY, asset_partitions=[partition]), limit=1).records
    assert records, f"no status observation for {partition}"
    obs = records[0].asset_observation
    assert obs is not None
    assert obs.tags.get("kavi/status") == str(obs.metadata["status"].value).split(" ", 1)[0]
    return str(obs.metadata["status"].value)


def test_check_description_is_plain_text_in_markdown() -> None:
    desc = check_description("x_y", 2, "x_y-a2-1", "policy", "failed", "1 violation(s)",
                             [f"m{i} __init__ *a* [b] <c> | `d`" for i in range(7)])
    head, who, msgs = desc.split("\n\n")
    assert head == "policy FAILED: 1 violation(s)"
    assert who.startswith("x_y, attempt 2, build x_y-a2-1 — [verification report](/assets/")
    lines = msgs.split("\n")
    assert lines[0] == "- m0 \\_\\_init\\_\\_ \\*a\\* \\[b\\] \\<c\\> \\| \\`d\\`"
    assert len(lines) == 6 and lines[-1] == "- … 2 more (metadata: messages)"
    assert plain("a\\b") == "a\\\\b"
