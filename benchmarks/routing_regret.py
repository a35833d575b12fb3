"""Routing regret on simulated models: the forge's Thompson routing beside uniform random and a blend-plus-UCB1
router, in one run.

Run: python benchmarks/routing_regret.py [--builds 200] [--reps 200] [--seed 0] [--costs | --no-costs]

Four simulated models with known success rates on four task types and a cost per call; the best model differs
by task type, and one model is cheap but decent. Each build draws a task type, the router picks a model, and
the build succeeds with that model's true rate. All three routers see the same task types and the same
uniform draws in a repetition (common random numbers), so their differences are not noise from the world.

- thompson (forge): the project's own code path, as the forge runs it for every build packet: all outcomes so
  far -> `compute_posteriors` -> `choose_model(seed=build id, costs=...)`, and the outcome is appended.
- uniform: a model picked uniformly at random.
- blend+UCB1: per (model, task type), a blend of a static prior quality score (one number per model, like a
  public leaderboard: its mean rate over task types) with the observed success rate, the prior counting as
  `prior_strength` observations, plus the UCB1 bonus sqrt(2 ln N / n); untried models are tried first. With
  costs on it ranks by that optimistic rate per unit cost.

Figures, after 50, 100 and 200 builds (mean ± one standard deviation over repetitions):
- regret: expected successes lost against always picking the model with the highest true rate for the task
  type (sum over builds of best rate minus chosen rate).
- cost regret (with --costs): efficiency lost against always picking the model with the most successes per
  unit cost, in builds: sum over builds of 1 - (rate/cost of the chosen model) / (rate/cost of the best one).
- best share: the fraction of picks that went to the best model for the build's task type (the best by rate,
  or by rate per unit cost with --costs, which is what the routers then aim for).
"""

import argparse
import math
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kavi.forge.context import ForgeSettings
from kavi.routing.posteriors import Outcome, compute_posteriors
from kavi.routing.thompson import choose_model

TASK_TYPES = ("READ_ONLY/simple", "READ_ONLY/complex", "FILE_WRITE/moderate", "NETWORK/moderate")


@dataclass(frozen=True)
class SimModel:
    name: str
    cost: float  # USD per call
    rates: dict[str, float]  # true success rate per task type


MODELS: tuple[SimModel, ...] = (
    SimModel("large-a", 0.024, dict(zip(TASK_TYPES, (0.92, 0.70, 0.74, 0.74), strict=True))),
    SimModel("large-b", 0.016, dict(zip(TASK_TYPES, (0.86, 0.62, 0.80, 0.66), strict=True))),
    SimModel("coder-c", 0.010, dict(zip(TASK_TYPES, (0.84, 0.76, 0.66, 0.55), strict=True))),
    SimModel("small-d", 0.006, dict(zip(TASK_TYPES, (0.88, 0.40, 0.60, 0.50), strict=True))),  # cheap but decent
)
CHECKPOINTS = (50, 100, 200)
ROUTERS = ("thompson (forge)", "uniform", "blend+UCB1")


class Router(Protocol):
    def choose(self, task_type: str, build_id: str) -> str: ...

    def update(self, model: str, task_type: str, success: bool, cost: float) -> None: ...


class ThompsonRouter:
    """The forge's routing, unchanged: recompute posteriors from every outcome, then choose by build id."""

    def __init__(self, models: Sequence[SimModel], costs: bool, prior_weight: float) -> None:
        self.names = [m.name for m in models]
        self.costs = {m.name: m.cost for m in models} if costs else None
        self.prior_weight = prior_weight
        self.outcomes: list[Outcome] = []

    def choose(self, task_type: str, build_id: str) -> str:
        posteriors = compute_posteriors(self.outcomes, models=self.names, task_types=[task_type],
                                        prior_weight=self.prior_weight)
        decision = choose_model(posteriors, task_type=task_type, models=self.names, seed=build_id,
                                costs=self.costs, set_aside={}, prior_weight=self.prior_weight)
        return decision.model

    def update(self, model: str, task_type: str, success: bool, cost: float) -> None:
        self.outcomes.append(Outcome(model, task_type, success, 0.0, 0, cost))


class UniformRouter:
    def __init__(self, models: Sequence[SimModel], rng: random.Random) -> None:
        self.names = [m.name for m in models]
        self.rng = rng

    def choose(self, task_type: str, build_id: str) -> str:
        return self.rng.choice(self.names)

    def update(self, model: str, task_type: str, success: bool, cost: float) -> None:
        pass


@dataclass
class BlendUCBRouter:
    """Static prior quality blended with the observed rate (weighted by observations), plus a UCB1 bonus."""

    quality: dict[str, float]
    costs: dict[str, float] | None = None
    prior_strength: float = 5.0
    n: dict[tuple[str, str], int] = field(default_factory=dict)
    s: dict[tuple[str, str], int] = field(default_factory=dict)

    def choose(self, task_type: str, build_id: str) -> str:
        names = list(self.quality)
        untried = [m for m in names if self.n.get((m, task_type), 0) == 0]
        if untried:
            return untried[0]
        total = sum(self.n[(m, task_type)] for m in names)
        best, best_score = names[0], -math.inf
        for m in names:
            n, s = self.n[(m, task_type)], self.s.get((m, task_type), 0)
            blend = (self.prior_strength * self.quality[m] + s) / (self.prior_strength + n)
            score = blend + math.sqrt(2.0 * math.log(total) / n)
            if self.costs:
                score /= self.costs[m]
            if score > best_score:
                best, best_score = m, score
        return best

    def update(self, model: str, task_type: str, success: bool, cost: float) -> None:
        key = (model, task_type)
        self.n[key] = self.n.get(key, 0) + 1
        self.s[key] = self.s.get(key, 0) + int(success)


def best_models(models: Sequence[SimModel], costs: bool) -> dict[str, str]:
    """The model each router should converge to per task type: highest rate, or highest rate per unit cost."""
    def value(m: SimModel, t: str) -> float:
        return m.rates[t] / m.cost if costs else m.rates[t]

    return {t: max(models, key=lambda m: value(m, t)).name for t in TASK_TYPES}


@dataclass
class Figures:
    """Per router and checkpoint, one value per repetition."""

    regret: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    cost_regret: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    best_share: dict[tuple[str, int], list[float]] = field(default_factory=dict)

    def add(self, table: dict[tuple[str, int], list[float]], router: str, at: int, value: float) -> None:
        table.setdefault((router, at), []).append(value)


def simulate(*, builds: int = 200, reps: int = 200, seed: int = 0, costs: bool = True,
             models: Sequence[SimModel] = MODELS, prior_weight: float | None = None) -> tuple[Figures, list[int]]:
    """Run every router for `reps` repetitions of `builds` builds; deterministic given `seed`."""
    pw = ForgeSettings().prior_weight if prior_weight is None else prior_weight
    checkpoints = sorted({c for c in CHECKPOINTS if c <= builds} | {builds})
    by_name = {m.name: m for m in models}
    best_rate = {t: max(m.rates[t] for m in models) for t in TASK_TYPES}
    best_eff = {t: max(m.rates[t] / m.cost for m in models) for t in TASK_TYPES}
    target = best_models(models, costs)
    quality = {m.name: statistics.fmean(m.rates.values()) for m in models}
    figs = Figures()
    for rep in range(reps):
        world = random.Random(seed * 1_000_003 + rep)
        types = [world.choice(TASK_TYPES) for _ in range(builds)]
        draws = [world.random() for _ in range(builds)]
        routers: dict[str, Router] = {
            "thompson (forge)": ThompsonRouter(models, costs, pw),
            "uniform": UniformRouter(models, random.Random(seed * 1_000_003 + rep + 7_919)),
            "blend+UCB1": BlendUCBRouter(quality, {m.name: m.cost for m in models} if costs else None),
        }
        for label, router in routers.items():
            regret = cost_regret = 0.0
            hits = 0
            for i, (ttype, u) in enumerate(zip(types, draws, strict=True), start=1):
                chosen = by_name[router.choose(ttype, f"sim-s{seed}-r{rep}-b{i}")]
                rate = chosen.rates[ttype]
                router.update(chosen.name, ttype, u < rate, chosen.cost)
                regret += best_rate[ttype] - rate
                cost_regret += 1.0 - (rate / chosen.cost) / best_eff[ttype]
                hits += chosen.name == target[ttype]
                if i in checkpoints:
                    figs.add(figs.regret, label, i, regret)
                    figs.add(figs.cost_regret, label, i, cost_regret)
                    figs.add(figs.best_share, label, i, hits / i)
    return figs, checkpoints


def _cell(values: list[float], fmt: str) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):{fmt}} ± {sd:{fmt}}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--builds", type=int, default=200)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--costs", action=argparse.BooleanOptionalAction, default=True,
                        help="give the routers each model's cost per call and score rate per unit cost")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    figs, checkpoints = simulate(builds=args.builds, reps=args.reps, seed=args.seed, costs=args.costs)
    elapsed = time.perf_counter() - t0

    print(f"Routing regret: {len(MODELS)} simulated models x {len(TASK_TYPES)} task types, {args.builds} builds, "
          f"{args.reps} repetitions, seed {args.seed}, costs {'on' if args.costs else 'off'}")
    print(f"{'model':10} {'cost/call':>9}  " + "  ".join(f"{t:>19}" for t in TASK_TYPES))
    for m in MODELS:
        print(f"{m.name:10} {m.cost:>9.3f}  " + "  ".join(f"{m.rates[t]:>19.2f}" for t in TASK_TYPES))
    target = best_models(MODELS, args.costs)
    print("best model per task type" + (" (by successes per unit cost)" if args.costs else "") + ": "
          + ", ".join(f"{t} -> {target[t]}" for t in TASK_TYPES))
    print()
    head = f"{'router':18} {'builds':>6}  {'regret (successes)':>20}"
    if args.costs:
        head += f"  {'cost regret (builds)':>21}"
    head += f"  {'best-model share':>17}"
    print(head)
    for label in ROUTERS:
        for at in checkpoints:
            row = f"{label:18} {at:>6}  {_cell(figs.regret[(label, at)], '8.2f'):>20}"
            if args.costs:
                row += f"  {_cell(figs.cost_regret[(label, at)], '8.2f'):>21}"
            row += f"  {_cell(figs.best_share[(label, at)], '6.3f'):>17}"
            print(row)
    print()
    print("mean ± one standard deviation over repetitions; regret is cumulative and expected (true rates), "
          "lower is better")
    if args.costs:
        print("with costs on, the routers aim for successes per unit cost, so their success regret is the price "
              "of choosing cheaper models; the cost regret is what they optimise")
    print(f"elapsed {elapsed:.1f} s")


if __name__ == "__main__":
    main()
