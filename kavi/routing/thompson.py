"""Thompson sampling over Beta posteriors, seeded by the build id so every choice replays exactly.

Every configured model gets one draw from its Beta posterior for the task type, in sorted model order, from a
generator seeded by the build id; the highest draw wins. With costs configured the score is the draw divided
by the model's cost per call, so the router maximises expected successes per unit cost. A model that answered
"not found" or "unauthorised" is set aside for the configuration it failed under; it is still drawn (so the
other models' draws do not shift) but never chosen, and the decision names it and why.
"""

import hashlib
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kavi.routing.posteriors import Posterior, prior_params

# A cost of zero (a local model) or below is read as this many USD per call, so scores stay finite.
COST_FLOOR_USD = 1e-6


class NoModelAvailable(RuntimeError):
    """Every configured model is set aside (not found or unauthorised)."""


@dataclass(frozen=True)
class RoutingDecision:
    model: str
    task_type: str
    seed: str
    samples: dict[str, float]
    scores: dict[str, float]
    set_aside: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    # The Beta parameters every configured model was drawn from, and the prior weight for unseen models:
    # with the seed, enough to replay the choice from the packet alone (see `replay_decision`).
    params: dict[str, tuple[float, float]] = field(default_factory=dict)
    prior_weight: float = 2.0
    # Cost per call each candidate was scored with (unrounded, so a replay scores alike); empty when the
    # routing is not cost-aware.
    costs: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "task_type": self.task_type,
            "seed": self.seed,
            "samples": self.samples,
            "scores": self.scores,
            "set_aside": self.set_aside,
            "reason": self.reason,
            "method": "thompson-beta",
            "objective": "successes per unit cost" if self.costs else "successes",
            "params": {m: [a, b] for m, (a, b) in self.params.items()},
            "prior_weight": self.prior_weight,
            "costs": self.costs,
        }


def _seed_int(seed: str) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")


def _sig(x: float) -> float:
    """Six significant digits: readable in the packet, and a per-unit-cost score keeps its resolution."""
    return float(f"{x:.6g}")


def _effective_costs(
    costs: Mapping[str, float], models: Sequence[str], observed: Mapping[str, float]
) -> tuple[dict[str, float], dict[str, str]]:
    """A cost per call for every model: configured, else observed for this task type, else the median of
    the configured ones (never a unit-less 1.0 mixed with dollars). Returns the costs and how each missing
    one was filled in."""
    configured = {m: float(c) for m, c in costs.items() if m in models}
    pool = list(configured.values()) or list(observed.values())
    fallback = statistics.median(pool) if pool else 1.0
    out: dict[str, float] = {}
    filled: dict[str, str] = {}
    for model in models:
        if model in configured:
            cost = configured[model]
        elif model in observed:
            cost, filled[model] = observed[model], "observed mean cost"
        else:
            cost, filled[model] = fallback, "no cost known, median of the others"
        out[model] = max(cost, COST_FLOOR_USD)
    return out, filled


def choose_from_params(
    params: Mapping[str, tuple[float, float]],
    *,
    task_type: str,
    models: Sequence[str],
    seed: str,
    costs: Mapping[str, float] | None = None,
    set_aside: Mapping[str, str] | None = None,
    prior_weight: float = 2.0,
    observed_costs: Mapping[str, float] | None = None,
) -> RoutingDecision:
    """Thompson sampling from explicit Beta parameters per model (models without any get the prior)."""
    if not models:
        raise NoModelAvailable("no models are configured (KAVI_LLM_MODELS)")
    aside = {m: r for m, r in (set_aside or {}).items() if m in models}
    candidates = [m for m in models if m not in aside]
    if not candidates:
        raise NoModelAvailable("every configured model is set aside: "
                               + "; ".join(f"{m}: {r}" for m, r in aside.items())
                               + " — fix the configuration (models or key) to route again")
    a0, b0 = prior_params(prior_weight)
    cost_aware = bool(costs)
    unit_costs, filled = _effective_costs(costs or {}, candidates, observed_costs or {}) if cost_aware else ({}, {})
    rng = random.Random(_seed_int(seed))
    used: dict[str, tuple[float, float]] = {}
    samples: dict[str, float] = {}
    raw: dict[str, float] = {}
    # Sample every configured model in a fixed order so a choice depends only on seed and posteriors.
    for model in sorted(models):
        a, b = params.get(model, (a0, b0))
        used[model] = (a, b)
        draw = rng.betavariate(a, b)
        if model in aside:
            continue
        samples[model] = round(draw, 6)
        raw[model] = draw / unit_costs[model] if cost_aware else draw
    best = max(sorted(candidates), key=lambda m: raw[m])
    scores = {m: _sig(v) for m, v in raw.items()}
    basis = "sample per unit cost" if cost_aware else "Thompson sample"
    reason = f"{best}: {basis} {scores[best]:.6g}, highest of {len(candidates)} model(s) for {task_type}"
    if cost_aware:
        reason += f" (cost {unit_costs[best]:.6g} per call)"
        if filled:
            reason += "; costs filled in: " + ", ".join(f"{m} ({how})" for m, how in sorted(filled.items()))
    if aside:
        reason += ("; set aside: " + ", ".join(f"{m} ({r})" for m, r in aside.items())
                   + " — until the endpoint, model list or key changes")
    return RoutingDecision(
        best, task_type, seed, samples, scores, aside, reason,
        params=used, prior_weight=prior_weight, costs=unit_costs,
    )


def choose_model(
    posteriors: Sequence[Posterior],
    *,
    task_type: str,
    models: Sequence[str],
    seed: str,
    costs: Mapping[str, float] | None = None,
    set_aside: Mapping[str, str] | None = None,
    prior_weight: float = 2.0,
) -> RoutingDecision:
    """Pick the model for one build of `task_type`; `seed` is the build id, so the choice replays exactly."""
    of_type = [p for p in posteriors if p.task_type == task_type]
    return choose_from_params(
        {p.model: (p.alpha, p.beta) for p in of_type},
        task_type=task_type,
        models=models,
        seed=seed,
        costs=costs,
        set_aside=set_aside,
        prior_weight=prior_weight,
        observed_costs={p.model: p.mean_cost_usd for p in of_type if p.mean_cost_usd is not None},
    )


def replay_decision(recorded: Mapping[str, Any]) -> RoutingDecision:
    """Re-run a decision from its recorded form (a packet's `routing`): the same model and the same samples."""
    params = {m: (float(ab[0]), float(ab[1])) for m, ab in recorded["params"].items()}
    return choose_from_params(
        params,
        task_type=recorded["task_type"],
        models=list(params),
        seed=recorded["seed"],
        costs=recorded.get("costs") or None,
        set_aside=recorded.get("set_aside") or None,
        prior_weight=float(recorded.get("prior_weight", 2.0)),
    )
