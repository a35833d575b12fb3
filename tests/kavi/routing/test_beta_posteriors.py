"""Beta posteriors and their 95% credible intervals: closed forms, sampling, and SciPy when it is installed."""

import importlib.util
import random

import pytest

from kavi.routing.beta import beta_ppf, betainc
from kavi.routing.posteriors import Outcome, compute_posteriors, prior_params


@pytest.mark.parametrize("q", [0.025, 0.5, 0.975])
@pytest.mark.parametrize("a", [1.0, 3.0, 12.5])
def test_quantiles_match_closed_forms(q: float, a: float) -> None:
    assert beta_ppf(q, 1.0, 1.0) == pytest.approx(q, abs=1e-9)
    assert beta_ppf(q, a, 1.0) == pytest.approx(q ** (1.0 / a), abs=1e-9)  # CDF x^a
    assert beta_ppf(q, 1.0, a) == pytest.approx(1.0 - (1.0 - q) ** (1.0 / a), abs=1e-9)  # CDF 1-(1-x)^b


def test_symmetry_and_monotonicity() -> None:
    for a, b in [(2.0, 5.0), (0.5, 0.5), (30.0, 4.0), (1.0, 101.0)]:
        assert beta_ppf(0.5, a, a) == pytest.approx(0.5, abs=1e-9)
        assert beta_ppf(0.025, a, b) == pytest.approx(1.0 - beta_ppf(0.975, b, a), abs=1e-9)
        qs = [beta_ppf(q, a, b) for q in (0.01, 0.025, 0.25, 0.5, 0.75, 0.975, 0.99)]
        assert qs == sorted(qs) and qs[0] >= 0.0 and qs[-1] <= 1.0
        assert betainc(a, b, beta_ppf(0.3, a, b)) == pytest.approx(0.3, abs=1e-9)


def test_intervals_agree_with_sampling() -> None:
    rng = random.Random(11)
    for a, b in [(4.0, 9.0), (21.0, 3.0), (1.5, 1.5)]:
        draws = sorted(rng.betavariate(a, b) for _ in range(20000))
        assert beta_ppf(0.025, a, b) == pytest.approx(draws[500], abs=0.01)
        assert beta_ppf(0.975, a, b) == pytest.approx(draws[19500], abs=0.01)


@pytest.mark.skipif(importlib.util.find_spec("scipy") is None, reason="scipy is not installed (not a dependency)")
def test_intervals_agree_with_scipy() -> None:
    from scipy import stats  # type: ignore[import-untyped]

    for a, b in [(1.0, 1.0), (3.0, 8.0), (0.3, 0.7), (150.0, 52.0)]:
        for q in (0.025, 0.975):
            assert beta_ppf(q, a, b) == pytest.approx(float(stats.beta.ppf(q, a, b)), abs=1e-7)


def test_posteriors_count_outcomes_with_the_prior_weight() -> None:
    outcomes = [Outcome("m", "t", True, 100.0, 10, 0.01)] * 7 + [Outcome("m", "t", False, 300.0, 10, 0.03)] * 3
    for weight in (2.0, 10.0):
        (p,) = compute_posteriors(outcomes, models=["m"], prior_weight=weight)
        a0, b0 = prior_params(weight)
        assert (p.alpha, p.beta) == (a0 + 7, b0 + 3) and (p.successes, p.failures, p.n) == (7, 3, 10)
        assert p.mean == pytest.approx(p.alpha / (p.alpha + p.beta))
        assert 0.0 < p.ci_low < p.mean < p.ci_high < 1.0
        assert p.mean_latency_ms == pytest.approx(160.0) and p.mean_cost_usd == pytest.approx(0.016)
    # A heavier prior pulls the mean towards 0.5 and narrows the interval.
    (light,) = compute_posteriors(outcomes, models=["m"], prior_weight=2.0)
    (heavy,) = compute_posteriors(outcomes, models=["m"], prior_weight=10.0)
    assert abs(heavy.mean - 0.5) < abs(light.mean - 0.5)
    assert heavy.ci_high - heavy.ci_low < light.ci_high - light.ci_low


def test_intervals_narrow_with_evidence() -> None:
    widths = []
    for n in (0, 10, 100, 1000):
        outcomes = [Outcome("m", "t", i % 4 != 0) for i in range(n)]
        (p,) = compute_posteriors(outcomes, models=["m"], task_types=["t"])
        widths.append(p.ci_high - p.ci_low)
        if n:
            assert p.ci_low < 0.75 < p.ci_high
    assert widths == sorted(widths, reverse=True) and widths[-1] < 0.06


def test_a_prior_must_be_a_proper_beta() -> None:
    with pytest.raises(ValueError, match="prior_weight"):
        prior_params(0.0)
    with pytest.raises(ValueError, match="p0"):
        prior_params(2.0, p0=1.0)
