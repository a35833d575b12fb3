"""On the Dagster side: the coach's verdict is the check gate_coach of the partition, and the verification
report's metadata carries the ceremony level, its reason and what it skipped (the real forge job, in process, on the
recorded model)."""

from collections.abc import Iterator

import dagster as dg
import pytest

from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.home import KaviHome
from kavi.proposals.model import load_proposal
from kavi_assets.assets.forge import REPORT_KEY
from tests.factories import REPO

EXAMPLES = REPO / "kavi" / "examples" / "proposals"


@pytest.fixture()
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


def test_gate_coach_fails_with_the_findings_and_the_report_shows_the_ceremony(
        kavi_home: KaviHome, instance: dg.DagsterInstance) -> None:
    from kavi_assets.definitions import current_definitions

    ctx = ForgeContext.open(kavi_home, lambda: None)  # type: ignore[arg-type, return-value]
    intake(ctx, load_proposal(EXAMPLES / "read_notes_by_tag.yaml"), None)
    instance.add_dynamic_partitions("proposals", ["read_notes_by_tag"])
    result = current_definitions().resolve_job_def("forge").execute_in_process(
        partition_key="read_notes_by_tag", instance=instance, raise_on_error=False, tags={"kavi/trigger": "test"})
    assert result.success
    checks = {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data
              for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}
    coach = checks["gate_coach"]
    assert not coach.passed and coach.partition == "read_notes_by_tag"
    assert "requested changes" in (coach.description or "") and "test\\_asserts\\_nothing" in (coach.description or "")
    assert all(c.passed for name, c in checks.items() if name != "gate_coach")
    report = instance.get_latest_materialization_event(REPORT_KEY)
    assert report is not None and report.asset_materialization is not None
    meta = report.asset_materialization.metadata
    assert meta["ceremony_level"].value == "standard"
    assert "complexity" in str(meta["ceremony"].value) and "required human approval" in str(meta["ceremony"].value)
    assert any("human approval" in s for s in meta["ceremony_skipped"].value)  # type: ignore[union-attr]
    assert str(meta["verdict"].value).startswith("FAILED (coach")
    assert ctx.records.require_proposal("read_notes_by_tag").status.value == "FAILED"
