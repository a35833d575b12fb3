"""The learner's posteriors from the ledger's SQL sums equal those computed from every outcome row."""

from pathlib import Path

from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.routing.posteriors import Outcome, OutcomeCounts, compute_posteriors, posteriors_from_counts


def test_sums_in_sql_give_the_same_posteriors_as_every_row(tmp_path: Path) -> None:
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    cases = [  # model, task type, success, latency (None and 0 count as none), tokens, cost
        ("model-a", "READ_ONLY/simple", True, 120.0, 900, 0.002),
        ("model-a", "READ_ONLY/simple", False, None, None, None),
        ("model-a", "READ_ONLY/simple", True, 0.0, 100, 0.004),
        ("model-b", "READ_ONLY/simple", False, 300.0, 800, None),
        ("model-b", "FILE_WRITE/complex", True, 50.0, 700, 0.01),
        ("model-c", "FILE_WRITE/complex", False, 75.5, None, 0.0),
    ]
    for i, (model, task, ok, latency, tokens, cost) in enumerate(cases):
        records.record_model_outcome(build_id=f"b{i}", name="word_count", model=model, task_type=task, success=ok,
                                     failure_kind=None if ok else "VERIFY_TEST", latency_ms=latency, tokens=tokens,
                                     cost_usd=cost)
    rows = records.model_outcomes()
    from_rows = compute_posteriors(
        [Outcome(r["model"], r["task_type"], bool(r["success"]), r["latency_ms"] or 0.0, r["tokens"] or 0,
                 r["cost_usd"]) for r in rows],
        models=["model-a", "model-b", "model-c", "model-d"], prior_weight=3.0)
    from_sums = posteriors_from_counts([OutcomeCounts(*r) for r in records.outcome_summary()],
                                       models=["model-a", "model-b", "model-c", "model-d"], prior_weight=3.0)
    assert from_sums == from_rows
    by_key = {(p.model, p.task_type): p for p in from_sums}
    a = by_key[("model-a", "READ_ONLY/simple")]
    assert (a.successes, a.failures, a.mean_latency_ms) == (2, 1, 120.0)
    assert a.mean_cost_usd is not None and abs(a.mean_cost_usd - 0.003) < 1e-12
    assert by_key[("model-d", "FILE_WRITE/complex")].n == 0
