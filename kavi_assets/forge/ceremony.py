"""Ceremony levels: how much verification a proposal gets beyond the deterministic gates, from its complexity.

The complexity score (kavi_assets.routing.complexity, 0..1) is mapped to a 1..10 scale a person can reason about:
low ≤ 2, standard 3..7, strict ≥ 8. The generated-input evidence (an independent implementation and oracle-free
checks on generated inputs) runs at the levels named by KAVI_EVIDENCE_LEVELS: by default at every level.

Why every level by default: complexity says how hard a skill is to build, not how likely a plausible wrong build is
to pass its few holdouts. Measured on the shipped proposals, 4 of the 10 demo proposals are low (scale 1-2, none is
strict: the highest is 6), and so are 103 of 164 HumanEval and 426 of 427 MBPP problems as the dataset benchmark
proposes them — the very material on which wrong solutions were trusted. Leaving low out by default would skip
the evidence on most of it. A person who wants less ceremony for trivial skills sets standard,strict.
"""

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from kavi_assets.config import ConfigError
from kavi_assets.proposals.model import Proposal
from kavi_assets.routing.complexity import score_complexity

EVIDENCE_LEVELS_ENV = "KAVI_EVIDENCE_LEVELS"
LOW_MAX = 2
STRICT_MIN = 8


class CeremonyLevel(StrEnum):
    LOW = "low"
    STANDARD = "standard"
    STRICT = "strict"


DEFAULT_EVIDENCE_LEVELS: tuple[CeremonyLevel, ...] = (CeremonyLevel.LOW, CeremonyLevel.STANDARD, CeremonyLevel.STRICT)


@dataclass(frozen=True)
class Ceremony:
    level: CeremonyLevel
    scale: int  # 1..10
    score: float  # the complexity score it came from, 0..1
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"level": self.level.value, "scale": self.scale, "complexity": self.score, "reason": self.reason}


def scale_of(score: float) -> int:
    """0..1 onto 1..10: each tenth of the score is one step (0.0-0.1 → 1, 0.9-1.0 → 10)."""
    clamped = max(0.0, min(1.0, score))
    return max(1, min(10, math.ceil(clamped * 10)))


def ceremony_for(proposal: Proposal) -> Ceremony:
    score = score_complexity(proposal).score
    scale = scale_of(score)
    if scale <= LOW_MAX:
        level = CeremonyLevel.LOW
        bound = f"≤ {LOW_MAX}"
    elif scale >= STRICT_MIN:
        level = CeremonyLevel.STRICT
        bound = f"≥ {STRICT_MIN}"
    else:
        level = CeremonyLevel.STANDARD
        bound = f"{LOW_MAX + 1}..{STRICT_MIN - 1}"
    return Ceremony(level, scale, score, f"complexity {score:.2f} → {scale}/10; {level.value} is {bound}")


def parse_levels(raw: str | None) -> tuple[CeremonyLevel, ...]:
    """KAVI_EVIDENCE_LEVELS: comma-separated levels (low, standard, strict), `all`, or `none`; unset or empty is the
    default (every level). An unknown entry is a ConfigError naming it."""
    text = (raw or "").strip().lower()
    if not text:
        return DEFAULT_EVIDENCE_LEVELS
    if text == "none":
        return ()
    if text == "all":
        return tuple(CeremonyLevel)
    levels: list[CeremonyLevel] = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        try:
            level = CeremonyLevel(entry)
        except ValueError:
            raise ConfigError(f"{EVIDENCE_LEVELS_ENV} entry {entry!r} must be one of low, standard, strict (or the "
                              f"whole value all or none), e.g. {EVIDENCE_LEVELS_ENV}=standard,strict") from None
        if level not in levels:
            levels.append(level)
    return tuple(levels)


def levels_from_env(environ: Mapping[str, str]) -> tuple[CeremonyLevel, ...]:
    return parse_levels(environ.get(EVIDENCE_LEVELS_ENV))


def evidence_decision(ceremony: Ceremony, levels: Iterable[CeremonyLevel | str]) -> tuple[bool, str]:
    """(runs, why): the generated-input evidence runs when the proposal's level is one of `levels`."""
    wanted = [CeremonyLevel(level) for level in levels]
    if ceremony.level in wanted:
        return True, f"ceremony level {ceremony.level.value} is one of the evidence levels ({_names(wanted)})"
    return False, (f"ceremony level {ceremony.level.value} ({ceremony.reason}) is not one of the evidence levels "
                   f"({_names(wanted) or 'none'}; {EVIDENCE_LEVELS_ENV})")


def _names(levels: Iterable[CeremonyLevel]) -> str:
    return ", ".join(level.value for level in levels)
