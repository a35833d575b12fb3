"""The retry sensor, called directly: retry requested, escalation blocks it, duplicates collapse by run key,
terminal errors escalate at once, the budget stops retries, and backoff holds a request back."""

from datetime import UTC, datetime, timedelta
from typing import Any

import dagster as dg
import pytest

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.lifecycle import FailureKind, ProposalStatus
from kavi.proposals.model import parse_proposal
from kavi.research.escalation import EscalationInput, triggers_for
from kavi.skills.base import SideEffectClass
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from sensors.retry import backoff_s, retry_failed_attempts


def _note(records: ForgeRecords, store_home: KaviHome, *, attempt: int, kind: FailureKind, triggers: list[str],
          status: ProposalStatus, created: datetime | None = None) -> None:
    from kavi.ledger.artifacts import ArtifactStore

    store = ArtifactStore(store_home.artifacts_dir)
    packet = store.put(f"p{attempt}".encode(), "build_packet")
    build_id = f"word_count-a{attempt}-x"
    records.start_build("word_count", run_id=None, model="m", endpoint="e", packet=packet, build_id=build_id,
                        attempt=attempt, parent_build_id=None, lineage_parent="0" * 64)
    note = store.put(f"n{attempt}".encode(), "research_note")
    records.record_research(build_id=build_id, name="word_count", attempt=attempt, failure_kind=kind.value,
                            fingerprint=f"f{attempt}", facts={}, triggers=triggers, advice=None,
                            escalated=bool(triggers), note=note, lineage_parent=None)
    records.set_status("word_count", status, build_id=build_id, reason="test")
    if created is not None:
        with records.ledger.connect() as con:
            con.execute("UPDATE research_notes SET created_at = ? WHERE build_id = ?", [created, build_id])


@pytest.fixture()
def records(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> ForgeRecords:
    r = ForgeRecords(Ledger(kavi_home.ledger_path))
    r.register_proposal(parse_proposal(proposal_data), source_path=None, complexity=0.1)
    return r


def _evaluate(home: KaviHome, cursor: str | None = None, backoff: float = 0.0) -> tuple[Any, str | None]:
    with dg.DagsterInstance.ephemeral() as instance:
        ctx = dg.build_sensor_context(
            instance=instance, cursor=cursor,
            resources={"home": SkillsHomeResource(root=str(home.root)),
                       "gates": GateRunnerResource(retry_backoff_s=backoff)},
        )
        return retry_failed_attempts(ctx), ctx.cursor


def test_retry_requested_with_run_key_and_tags(kavi_home: KaviHome, records: ForgeRecords) -> None:
    _note(records, kavi_home, attempt=1, kind=FailureKind.VERIFY_LINT, triggers=[], status=ProposalStatus.FAILED)
    result, cursor = _evaluate(kavi_home)
    assert isinstance(result, dg.SensorResult)
    (req,) = result.run_requests or []
    assert req.run_key == "retry:word_count:2"
    assert req.partition_key == "word_count"
    assert req.tags["kavi/attempt"] == "2"
    assert req.tags["kavi/parent_build"] == "word_count-a1-x"
    assert req.tags["kavi/reason"] == "VERIFY_LINT"
    # Evaluated again from its cursor, the same note yields the same run key: Dagster drops the duplicate.
    again, _ = _evaluate(kavi_home, cursor)
    keys = [r.run_key for r in again.run_requests] if isinstance(again, dg.SensorResult) else []
    assert keys in ([], ["retry:word_count:2"])


def test_escalation_blocks_retry(kavi_home: KaviHome, records: ForgeRecords) -> None:
    _note(records, kavi_home, attempt=1, kind=FailureKind.VERIFY_POLICY, triggers=["SECURITY_CLASS"],
          status=ProposalStatus.ESCALATED)
    result, _ = _evaluate(kavi_home)
    assert isinstance(result, dg.SkipReason)
    assert "escalated" in str(result.skip_message) and "SECURITY_CLASS" in str(result.skip_message)


def test_terminal_error_escalates_at_once() -> None:
    trig = triggers_for(EscalationInput(kind=FailureKind.LLM_UNAVAILABLE, fingerprint="x", previous_fingerprints=[],
                                        attempt=1, budget=5, declared_class=SideEffectClass.READ_ONLY,
                                        llm_terminal=True))
    assert "TERMINAL_LLM_ERROR" in trig


def test_budget_stops_retries(kavi_home: KaviHome, records: ForgeRecords) -> None:
    trig = triggers_for(EscalationInput(kind=FailureKind.VERIFY_TEST, fingerprint="x", previous_fingerprints=["a"],
                                        attempt=3, budget=3, declared_class=SideEffectClass.READ_ONLY))
    assert "BUDGET_EXHAUSTED" in trig
    _note(records, kavi_home, attempt=1, kind=FailureKind.VERIFY_TEST, triggers=[str(t) for t in trig],
          status=ProposalStatus.ESCALATED)
    result, _ = _evaluate(kavi_home)
    assert isinstance(result, dg.SkipReason)


def test_backoff_holds_then_releases(kavi_home: KaviHome, records: ForgeRecords) -> None:
    assert backoff_s(1, 2.0, 300.0) == 2.0 and backoff_s(3, 2.0, 300.0) == 8.0 and backoff_s(20, 2.0, 300.0) == 300
    _note(records, kavi_home, attempt=1, kind=FailureKind.VERIFY_LINT, triggers=[], status=ProposalStatus.FAILED)
    held, _ = _evaluate(kavi_home, backoff=3600.0)
    assert isinstance(held, dg.SkipReason) and "backing off" in str(held.skip_message)
    with records.ledger.connect() as con:
        con.execute("UPDATE research_notes SET created_at = ?", [datetime.now(UTC) - timedelta(hours=2)])
    released, _ = _evaluate(kavi_home, cursor=None, backoff=3600.0)
    assert isinstance(released, dg.SensorResult) and released.run_requests


def test_stale_note_not_retried(kavi_home: KaviHome, records: ForgeRecords) -> None:
    _note(records, kavi_home, attempt=1, kind=FailureKind.VERIFY_LINT, triggers=[], status=ProposalStatus.FAILED)
    records.set_status("word_count", ProposalStatus.TRUSTED, build_id=None, reason="test")
    result, _ = _evaluate(kavi_home)
    assert isinstance(result, dg.SkipReason)


def test_duplicate_requests_collapse_by_run_key(kavi_home: KaviHome, records: ForgeRecords) -> None:
    _note(records, kavi_home, attempt=1, kind=FailureKind.VERIFY_TEST, triggers=[], status=ProposalStatus.FAILED)
    first, cursor = _evaluate(kavi_home)
    # A fresh cursor (a reset sensor, a second daemon) and the advanced cursor both see the same note again:
    # every request for it carries the same run key, which Dagster launches at most once.
    fresh, _ = _evaluate(kavi_home, cursor=None)
    advanced, _ = _evaluate(kavi_home, cursor)
    results = [first, fresh, advanced]
    assert all(isinstance(res, dg.SensorResult) for res in results), results
    keys = [[r.run_key for r in (res.run_requests or [])] for res in results]
    assert keys == [["retry:word_count:2"]] * 3
    assert {r.tags["kavi/parent_build"] for res in results for r in res.run_requests or []} == {"word_count-a1-x"}
    # The next failure gets the next key, never a reuse of the previous one.
    _note(records, kavi_home, attempt=2, kind=FailureKind.VERIFY_TEST, triggers=[], status=ProposalStatus.FAILED)
    later, _ = _evaluate(kavi_home, cursor)
    assert isinstance(later, dg.SensorResult)
    assert [r.run_key for r in later.run_requests or []] == ["retry:word_count:3"]
