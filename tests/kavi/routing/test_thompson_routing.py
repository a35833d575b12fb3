"""Thompson routing: decisions replay from the build id, costs turn it into successes per unit cost, and a
set-aside model is never chosen until the configuration changes."""

import json
from collections import Counter

import pytest

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.llm.client import config_fingerprint
from kavi.routing.posteriors import Outcome, Posterior, compute_posteriors
from kavi.routing.thompson import (
    NoModelAvailable,
    choose_model,
    replay_decision,
)

MODELS = ["coder-a", "coder-b", "coder-c"]
TTYPE = "READ_ONLY/simple"


def _posteriors(rates: dict[str, tuple[int, int]], prior_weight: float = 2.0) -> list[Posterior]:
    outcomes = [Outcome(m, TTYPE, True) for m, (s, _) in rates.items() for _ in range(s)]
    outcomes += [Outcome(m, TTYPE, False) for m, (_, f) in rates.items() for _ in range(f)]
    return compute_posteriors(outcomes, models=list(rates), task_types=[TTYPE], prior_weight=prior_weight)


def test_same_build_id_and_posteriors_replay_the_same_choice_and_samples() -> None:
    post = _posteriors({"coder-a": (3, 2), "coder-b": (2, 3), "coder-c": (1, 1)})
    first = choose_model(post, task_type=TTYPE, models=MODELS, seed="word_count-a1-1a2b3c4d")
    again = choose_model(list(reversed(post)), task_type=TTYPE, models=list(reversed(MODELS)),
                         seed="word_count-a1-1a2b3c4d")
    assert again.model == first.model
    assert again.samples == first.samples and again.scores == first.scores
    assert set(first.samples) == set(MODELS)
    assert first.seed == "word_count-a1-1a2b3c4d"


def test_the_recorded_decision_replays_from_the_packet_alone() -> None:
    post = _posteriors({"coder-a": (7, 2), "coder-b": (4, 4), "coder-c": (0, 3)})
    decision = choose_model(post, task_type=TTYPE, models=MODELS, seed="b-1", costs={"coder-a": 0.02,
                            "coder-b": 0.01, "coder-c": 0.005}, set_aside={"coder-c": "MODEL_NOT_FOUND"})
    recorded = json.loads(json.dumps(decision.to_dict()))  # as it sits in the BUILD_PACKET
    assert recorded["samples"] and recorded["params"]["coder-a"] == [8.0, 3.0]
    replayed = replay_decision(recorded)
    assert replayed.model == decision.model
    assert replayed.samples == decision.samples and replayed.scores == decision.scores


def test_different_build_ids_vary() -> None:
    post = _posteriors({m: (2, 2) for m in MODELS})
    decisions = [choose_model(post, task_type=TTYPE, models=MODELS, seed=f"word_count-a{i}-x") for i in range(60)]
    assert len({tuple(sorted(d.samples.items())) for d in decisions}) == 60
    picked = Counter(d.model for d in decisions)
    assert set(picked) == set(MODELS), picked  # equal posteriors: every model gets its turn


def test_samples_follow_the_posteriors() -> None:
    post = _posteriors({"coder-a": (40, 4), "coder-b": (4, 40), "coder-c": (22, 22)})
    picked = Counter(choose_model(post, task_type=TTYPE, models=MODELS, seed=f"s{i}").model for i in range(100))
    assert picked["coder-a"] >= 98


def test_prior_weight_is_used_for_unseen_models() -> None:
    heavy = choose_model([], task_type=TTYPE, models=["only"], seed="x", prior_weight=50.0)
    light = choose_model([], task_type=TTYPE, models=["only"], seed="x", prior_weight=0.5)
    assert heavy.params["only"] == (25.0, 25.0) and light.params["only"] == (0.25, 0.25)
    assert heavy.prior_weight == 50.0
    with pytest.raises(ValueError, match="prior_weight"):
        choose_model([], task_type=TTYPE, models=["only"], seed="x", prior_weight=0.0)


def test_costs_prefer_the_cheaper_model_when_success_rates_tie() -> None:
    costs = {"coder-a": 0.02, "coder-b": 0.01}
    tied = _posteriors({"coder-a": (45, 15), "coder-b": (45, 15)})
    picks = Counter(choose_model(tied, task_type=TTYPE, models=["coder-a", "coder-b"], seed=f"b{i}",
                                 costs=costs).model for i in range(100))
    assert picks == Counter({"coder-b": 100})
    # Without costs the same tie is split between them.
    plain = Counter(choose_model(tied, task_type=TTYPE, models=["coder-a", "coder-b"], seed=f"b{i}").model
                    for i in range(100))
    assert plain["coder-a"] > 20 and plain["coder-b"] > 20
    d = choose_model(tied, task_type=TTYPE, models=["coder-a", "coder-b"], seed="b0", costs=costs)
    assert d.to_dict()["objective"] == "successes per unit cost"
    assert d.costs == costs and "per unit cost" in d.reason
    assert d.scores["coder-b"] == pytest.approx(d.samples["coder-b"] / 0.01, rel=1e-5)


def test_costs_maximise_expected_successes_per_unit_cost() -> None:
    # coder-a succeeds more often (0.9 vs 0.6) but costs four times as much: 0.6/0.01 beats 0.9/0.04.
    post = _posteriors({"coder-a": (90, 10), "coder-b": (60, 40)})
    costs = {"coder-a": 0.04, "coder-b": 0.01}
    with_costs = Counter(choose_model(post, task_type=TTYPE, models=["coder-a", "coder-b"], seed=f"c{i}",
                                      costs=costs).model for i in range(50))
    without = Counter(choose_model(post, task_type=TTYPE, models=["coder-a", "coder-b"], seed=f"c{i}").model
                      for i in range(50))
    assert with_costs["coder-b"] == 50 and without["coder-a"] == 50


def test_a_model_without_a_configured_cost_is_not_scored_in_other_units() -> None:
    # Before: a missing cost meant "divide by nothing", so a raw draw (< 1) competed with draw/cost (> 1).
    post = _posteriors({"coder-a": (30, 10), "coder-b": (30, 10)})
    picks = Counter(choose_model(post, task_type=TTYPE, models=["coder-a", "coder-b"], seed=f"m{i}",
                                 costs={"coder-a": 0.01}).model for i in range(60))
    assert picks["coder-a"] > 10 and picks["coder-b"] > 10
    d = choose_model(post, task_type=TTYPE, models=["coder-a", "coder-b"], seed="m0", costs={"coder-a": 0.01})
    assert d.costs["coder-b"] == 0.01 and "coder-b (no cost known" in d.reason
    # A cost observed in the outcomes fills the gap before any guess.
    observed = compute_posteriors([Outcome("coder-b", TTYPE, True, cost_usd=0.002)] * 5,
                                  models=["coder-a", "coder-b"], task_types=[TTYPE])
    d = choose_model(observed, task_type=TTYPE, models=["coder-a", "coder-b"], seed="m0", costs={"coder-a": 0.01})
    assert d.costs["coder-b"] == pytest.approx(0.002) and "coder-b (observed mean cost)" in d.reason


def test_a_free_model_keeps_scores_finite() -> None:
    d = choose_model([], task_type=TTYPE, models=["local", "remote"], seed="z", costs={"local": 0.0, "remote": 0.01})
    assert all(v < float("inf") for v in d.scores.values())
    json.dumps(d.to_dict(), allow_nan=False)


def test_a_set_aside_model_is_never_chosen_and_the_decision_says_why() -> None:
    # ghost would win every draw on its posterior; it is set aside, so it never does.
    post = _posteriors({"ghost": (50, 0), "coder-a": (1, 9)})
    aside = {"ghost": "MODEL_NOT_FOUND: model 'ghost' not found"}
    for i in range(40):
        d = choose_model(post, task_type=TTYPE, models=["ghost", "coder-a"], seed=f"g{i}", set_aside=aside)
        assert d.model == "coder-a"
        assert "ghost" not in d.samples and "ghost" not in d.scores
        assert d.set_aside == aside
        assert "set aside: ghost (MODEL_NOT_FOUND" in d.reason and "until the endpoint, model list or key changes" \
            in d.reason
    # Setting a model aside does not shift the draws of the others.
    free = choose_model(post, task_type=TTYPE, models=["ghost", "coder-a"], seed="g0")
    held = choose_model(post, task_type=TTYPE, models=["ghost", "coder-a"], seed="g0", set_aside=aside)
    assert held.samples["coder-a"] == free.samples["coder-a"]
    with pytest.raises(NoModelAvailable, match="every configured model is set aside"):
        choose_model(post, task_type=TTYPE, models=["ghost"], seed="g", set_aside=aside)


def test_a_set_aside_model_comes_back_when_the_configuration_changes(kavi_home: KaviHome) -> None:
    records = ForgeRecords(Ledger(kavi_home.ledger_path))
    models = ["ghost", "coder-a"]
    before = config_fingerprint("http://127.0.0.1:8000/v1", models)
    records.set_model_aside(before, "ghost", "AUTH: the endpoint refused the API key", build_id=None)
    post = _posteriors({"ghost": (50, 0), "coder-a": (1, 9)})

    def route(fingerprint: str, seed: str) -> str:
        return choose_model(post, task_type=TTYPE, models=models, seed=seed,
                            set_aside=records.models_set_aside(fingerprint)).model

    assert {route(before, f"r{i}") for i in range(10)} == {"coder-a"}
    assert route(config_fingerprint("http://127.0.0.1:8000/v1", list(reversed(models))), "r0") == "coder-a"
    for changed in (config_fingerprint("http://127.0.0.1:8001/v1", models),
                    config_fingerprint("http://127.0.0.1:8000/v1", [*models, "coder-b"]),
                    config_fingerprint("http://127.0.0.1:8000/v1", models, credential="a-new-key")):
        assert changed != before
        assert records.models_set_aside(changed) == {}
        assert route(changed, "r0") == "ghost"


def test_fingerprint_without_a_credential_is_unchanged_and_never_holds_the_key() -> None:
    fp = config_fingerprint("http://127.0.0.1:8000/v1", ["b", "a"])
    assert fp == config_fingerprint("http://127.0.0.1:8000/v1", ["a", "b"], credential="")
    keyed = config_fingerprint("http://127.0.0.1:8000/v1", ["a", "b"], credential="sk-secret")
    assert keyed != fp and "secret" not in keyed and len(keyed) == 16
