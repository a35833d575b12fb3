"""Routing reads outcome counts summed by the ledger (not every outcome row): its decisions must be exactly those
of compute_posteriors + choose_model over all the rows."""

import random

import pytest

from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.routing.posteriors import Outcome, compute_posteriors, prior_params
from kavi.routing.thompson import choose_from_params, choose_model

MODELS = ["coder-a", "coder-b", "coder-c"]
TYPES = ["READ_ONLY/simple", "READ_ONLY/complex", "NETWORK/simple"]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> ForgeRecords:
    rec = ForgeRecords(Ledger(tmp_path_factory.mktemp("ledger") / "l.duckdb"))
    rng = random.Random(7)
    with rec.session():
        _fill(rec, rng)
    return rec


def _fill(rec: ForgeRecords, rng: random.Random) -> None:
    for i in range(400):
        # "ghost" appears in the outcomes but is not configured; costs are exact binary fractions or missing.
        model = rng.choice([*MODELS, "ghost"])
        rec.record_model_outcome(
            build_id=f"b{i}", name=f"p{i % 37}", model=model, task_type=rng.choice(TYPES),
            success=rng.random() < {"coder-a": 0.7, "coder-b": 0.4}.get(model, 0.5), failure_kind=None,
            latency_ms=rng.choice([None, 120.0, 800.0]), tokens=rng.choice([None, 1500]),
            cost_usd=rng.choice([None, 0.25, 0.5, 0.125]),
        )


@pytest.mark.parametrize("costs", [None, {"coder-a": 0.5}])
@pytest.mark.parametrize("prior_weight", [2.0, 5.0])
def test_counts_route_exactly_as_all_rows(records: ForgeRecords, costs: dict[str, float] | None,
                                          prior_weight: float) -> None:
    rows = records.model_outcomes()
    outcomes = [Outcome(o["model"], o["task_type"], bool(o["success"]), o["latency_ms"] or 0.0, o["tokens"] or 0,
                        o["cost_usd"]) for o in rows]
    a0, b0 = prior_params(prior_weight)
    for ttype in [*TYPES, "FILE_WRITE/simple"]:
        posteriors = compute_posteriors(outcomes, models=MODELS, task_types=[ttype], prior_weight=prior_weight)
        counts = records.outcome_counts(ttype)
        for seed in (f"build-{i}" for i in range(25)):
            old = choose_model(posteriors, task_type=ttype, models=MODELS, seed=seed, costs=costs,
                               set_aside={"coder-c": "not found"}, prior_weight=prior_weight)
            new = choose_from_params(
                {m: (a0 + s, b0 + f) for m, (s, f, _) in counts.items()}, task_type=ttype, models=MODELS,
                seed=seed, costs=costs, set_aside={"coder-c": "not found"}, prior_weight=prior_weight,
                observed_costs={m: c for m, (_, _, c) in counts.items() if c is not None})
            assert new.to_dict() == old.to_dict()
