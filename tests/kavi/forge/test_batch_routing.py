"""Runs of one batch route on the outcomes recorded before the batch, so a batch forged N at once picks
the same models (and so reaches the same verdicts) whatever order its runs finish in."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kavi.forge.batch import ROUTING_AS_OF_TAG, routing_as_of
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger


def _outcome(rec: ForgeRecords, i: int, success: bool) -> None:
    rec.record_model_outcome(build_id=f"b{i}", name=f"p{i}", model="coder-a", task_type="READ_ONLY/simple",
                             success=success, failure_kind=None, latency_ms=None, tokens=None, cost_usd=None)


def test_counts_as_of_a_moment_leave_out_later_outcomes(tmp_path: Path) -> None:
    rec = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    _outcome(rec, 1, True)
    _outcome(rec, 2, False)
    mark = datetime.now(UTC)
    _outcome(rec, 3, True)  # a run of the batch finished first
    assert rec.outcome_counts("READ_ONLY/simple")["coder-a"][:2] == (2, 1)
    assert rec.outcome_counts("READ_ONLY/simple", as_of=mark)["coder-a"][:2] == (1, 1)
    assert rec.outcome_counts("READ_ONLY/simple", as_of=mark - timedelta(days=1)) == {}


def test_the_batch_tag_is_parsed_strictly() -> None:
    now = datetime.now(UTC)
    assert routing_as_of({}) is None
    assert routing_as_of({ROUTING_AS_OF_TAG: now.isoformat()}) == now
    for bad in ("yesterday", "2026-01-01T00:00:00", (now + timedelta(days=2)).isoformat(), "x" * 500):
        with pytest.raises(ValueError, match=ROUTING_AS_OF_TAG):
            routing_as_of({ROUTING_AS_OF_TAG: bad})
