"""The retry sensor's log, as `dagster dev` shows it: a proposal's state is logged when it changes, not every tick
(an escalated proposal used to log "waits for a person" 85 times in five minutes)."""

from typing import Any

import dagster as dg
import pytest

from kavi.home import KaviHome
from kavi.ledger.artifacts import ArtifactStore
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.lifecycle import FailureKind, ProposalStatus
from kavi.proposals.model import parse_proposal
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from sensors.retry import retry_failed_attempts


def _fail(home: KaviHome, records: ForgeRecords, name: str, attempt: int, triggers: list[str]) -> None:
    store = ArtifactStore(home.artifacts_dir)
    packet = store.put(f"{name} p{attempt}".encode(), "build_packet")
    build_id = f"{name}-a{attempt}-x"
    records.start_build(name, run_id=None, model="m", endpoint="e", packet=packet, build_id=build_id, attempt=attempt,
                        parent_build_id=None, lineage_parent="0" * 64)
    note = store.put(f"{name} n{attempt}".encode(), "research_note")
    records.record_research(build_id=build_id, name=name, attempt=attempt, failure_kind=FailureKind.VERIFY_TEST.value,
                            fingerprint=f"f{attempt}", facts={}, triggers=triggers, advice=None,
                            escalated=bool(triggers), note=note, lineage_parent=None)
    records.set_status(name, ProposalStatus.ESCALATED if triggers else ProposalStatus.FAILED, build_id=build_id,
                       reason="test")


def _tick(instance: Any, home: KaviHome, cursor: str | None, backoff: float) -> str | None:
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources={
        "home": SkillsHomeResource(root=str(home.root)), "gates": GateRunnerResource(retry_backoff_s=backoff)})
    retry_failed_attempts(ctx)
    return ctx.cursor


def _lines(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


def test_escalated_and_backing_off_proposals_are_logged_once_per_state(
        kavi_home: KaviHome, proposal_data: dict[str, Any], capfd: pytest.CaptureFixture[str]) -> None:
    records = ForgeRecords(Ledger(kavi_home.ledger_path))
    for name in ("word_count", "other_skill"):
        records.register_proposal(parse_proposal({**proposal_data, "name": name}), source_path=None, complexity=0.1)
    _fail(kavi_home, records, "other_skill", 1, [])  # backing off: the cursor stays at its note
    _fail(kavi_home, records, "word_count", 1, ["SECURITY_CLASS"])  # the latest note: every tick reads it again
    cursor: str | None = None
    with dg.DagsterInstance.ephemeral() as instance:
        for _ in range(5):
            cursor = _tick(instance, kavi_home, cursor, backoff=3600.0)
        first = capfd.readouterr().err  # Dagster's sensor log handler writes to stderr
        assert len(_lines(first, "waits for a person")) == 1, first
        assert len(_lines(first, "backing off")) == 1, first
        # A new state (a person retried, the next attempt escalated again) is a new line, once.
        _fail(kavi_home, records, "word_count", 2, ["REPEATED_FAILURE"])
        for _ in range(3):
            cursor = _tick(instance, kavi_home, cursor, backoff=3600.0)
    later = capfd.readouterr().err
    escalated = _lines(later, "waits for a person")
    assert len(escalated) == 1 and "attempt 2" in escalated[0] and "REPEATED_FAILURE" in escalated[0], later
    assert _lines(later, "backing off") == [], later
