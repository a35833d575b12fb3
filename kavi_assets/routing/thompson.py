"""Thompson sampling over Beta posteriors, seeded by the build id so every choice replays exactly."""

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kavi_assets.routing.posteriors import Posterior, prior_params


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
        }


def config_fingerprint(base_url: str, models: Sequence[str]) -> str:
    return hashlib.sha256(("|".join([base_url, *sorted(models)])).encode()).hexdigest()[:16]


def _seed_int(seed: str) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")


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
    if not models:
        raise NoModelAvailable("no models are configured (KAVI_LLM_MODELS)")
    aside = {m: r for m, r in (set_aside or {}).items() if m in models}
    candidates = [m for m in models if m not in aside]
    if not candidates:
        raise NoModelAvailable("every configured model is set aside: "
                               + "; ".join(f"{m}: {r}" for m, r in aside.items())
                               + " — fix the configuration (models or key) to route again")
    a0, b0 = prior_params(prior_weight)
    params = {p.model: (p.alpha, p.beta) for p in posteriors if p.task_type == task_type}
    rng = random.Random(_seed_int(seed))
    samples: dict[str, float] = {}
    scores: dict[str, float] = {}
    # Sample every configured model in a fixed order so a choice depends only on seed and posteriors.
    for model in sorted(models):
        a, b = params.get(model, (a0, b0))
        draw = rng.betavariate(a, b)
        if model in aside:
            continue
        samples[model] = round(draw, 6)
        cost = (costs or {}).get(model)
        scores[model] = round(draw / cost, 6) if cost else round(draw, 6)
    best = max(sorted(candidates), key=lambda m: scores[m])
    basis = "sample per unit cost" if costs else "Thompson sample"
    reason = f"{best}: {basis} {scores[best]:.3f}, highest of {len(candidates)} model(s) for {task_type}"
    if aside:
        reason += "; set aside: " + ", ".join(f"{m} ({r})" for m, r in aside.items())
    return RoutingDecision(best, task_type, seed, samples, scores, aside, reason)
