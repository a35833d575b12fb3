"""The routing-regret benchmark's simulation, run small and in process: the forge's Thompson routing loses
fewer expected successes than uniform random, with and without costs, and the run is deterministic."""

import importlib.util
import sys
from types import ModuleType

import pytest

from tests.factories import REPO

BENCH = REPO / "benchmarks" / "routing_regret.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("routing_regret_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def test_thompson_regret_is_lower_than_uniform(bench: ModuleType) -> None:
    figs, checkpoints = bench.simulate(builds=100, reps=24, seed=5, costs=False)
    assert checkpoints == [50, 100]
    thompson = _mean(figs.regret[("thompson (forge)", 100)])
    uniform = _mean(figs.regret[("uniform", 100)])
    assert thompson < 0.9 * uniform, (thompson, uniform)
    assert _mean(figs.best_share[("thompson (forge)", 100)]) > _mean(figs.best_share[("uniform", 100)])


def test_with_costs_thompson_loses_less_efficiency_than_uniform(bench: ModuleType) -> None:
    figs, _ = bench.simulate(builds=100, reps=16, seed=5, costs=True)
    assert _mean(figs.cost_regret[("thompson (forge)", 100)]) < 0.5 * _mean(figs.cost_regret[("uniform", 100)])
    assert _mean(figs.best_share[("thompson (forge)", 100)]) > 0.5


def test_simulation_is_deterministic_given_the_seed(bench: ModuleType) -> None:
    a, _ = bench.simulate(builds=30, reps=3, seed=9, costs=True)
    b, _ = bench.simulate(builds=30, reps=3, seed=9, costs=True)
    c, _ = bench.simulate(builds=30, reps=3, seed=10, costs=True)
    assert a.regret == b.regret and a.best_share == b.best_share
    assert a.regret != c.regret
