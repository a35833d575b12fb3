"""Complexity of a proposal, scored from its spec, and the attempt budget that scales with it."""

import re
from dataclasses import dataclass, field

from kavi.proposals.model import Proposal
from kavi.skills.base import SideEffectClass

# Weights sum to 1; each component is normalised to [0, 1] first.
WEIGHTS = {"side_effect": 0.30, "schema": 0.35, "description": 0.25, "examples": 0.10}
_SIDE_EFFECT = {
    SideEffectClass.READ_ONLY: 0.0,
    SideEffectClass.FILE_WRITE: 0.5,
    SideEffectClass.NETWORK: 0.75,
    SideEffectClass.SECRET_READ: 1.0,
}
_HARD_WORDS = re.compile(
    r"\b(parse|rank|score|recursive|nested|schedule|optimi[sz]e|concurren\w*|regex|unicode|timezone|date|"
    r"statistic\w*|graph|tree|sort|merge|diff|retry|paginat\w*|validate)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ComplexityScore:
    score: float
    components: dict[str, float] = field(default_factory=dict)


def _field_weight(type_name: str) -> float:
    base = 2.0 if type_name.startswith(("list[", "dict[")) else 1.0
    return base + (0.5 if type_name.endswith("| None") else 0.0)


def score_complexity(proposal: Proposal) -> ComplexityScore:
    schema_units = sum(_field_weight(f.type) for f in (*proposal.inputs, *proposal.outputs))
    words = len(proposal.description.split())
    hard = len(set(m.group(0).lower() for m in _HARD_WORDS.finditer(proposal.description)))
    components = {
        "side_effect": _SIDE_EFFECT[proposal.side_effect_class],
        "schema": min(1.0, max(0.0, (schema_units - 2.0) / 10.0)),
        "description": min(1.0, words / 120.0 + 0.15 * hard),
        "examples": min(1.0, (len(proposal.examples) + len(proposal.holdout_examples)) / 16.0),
    }
    score = sum(WEIGHTS[k] * v for k, v in components.items())
    return ComplexityScore(round(min(1.0, score), 4), components)


def attempt_budget(score: float, *, base: int = 3, max_budget: int = 8) -> int:
    """Simple skills get `base` attempts; the most complex get up to `max_budget`."""
    return int(min(max_budget, base + round(max(0.0, min(1.0, score)) * (max_budget - base))))
