"""Ceremony levels: how much verification a proposal gets beyond the deterministic gates, from its complexity.

The complexity score (kavi.routing.complexity, 0..1) is mapped to a 1..10 scale: low ≤ 2, standard 3..7,
strict ≥ 8. The generated-input evidence runs at the levels named by KAVI_EVIDENCE_LEVELS, by default every level:
complexity says how hard a skill is to build, not how likely a plausible wrong build is to pass its few holdouts.
"""

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from kavi.proposals.model import Proposal
from kavi.routing.complexity import score_complexity
from kavi.settings import KaviSettings
from kavi.settings_parsers import EVIDENCE_LEVELS_ENV
from kavi.settings_parsers import parse_levels as parse_level_names

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
    score_level: "CeremonyLevel | None" = None  # set when a person's level replaced the score's
    set_by: str = ""

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"level": self.level.value, "scale": self.scale, "complexity": self.score,
                                  "reason": self.reason}
        if self.score_level is not None:
            out.update(score_level=self.score_level.value, set_by=self.set_by)
        return out


def scale_of(score: float) -> int:
    """0..1 onto 1..10: each tenth of the score is one step (0.0-0.1 → 1, 0.9-1.0 → 10)."""
    clamped = max(0.0, min(1.0, score))
    return max(1, min(10, math.ceil(clamped * 10)))


def ceremony_for(proposal: Proposal) -> Ceremony:
    return ceremony_of_score(score_complexity(proposal).score)


def ceremony_of_score(score: float) -> Ceremony:
    """The level a complexity score (0..1, as the ledger records it with each proposal) maps to."""
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
    default (every level). An unknown entry is a ConfigError naming it (parsed by kavi.settings_parsers)."""
    return tuple(CeremonyLevel(name) for name in parse_level_names(raw))


def levels_of(settings: KaviSettings) -> tuple[CeremonyLevel, ...]:
    return tuple(CeremonyLevel(name) for name in settings.evidence_levels)


def evidence_decision(ceremony: Ceremony, levels: Iterable[CeremonyLevel | str]) -> tuple[bool, str]:
    """(runs, why): the generated-input evidence runs when the proposal's level is one of `levels`."""
    wanted = [CeremonyLevel(level) for level in levels]
    if ceremony.level in wanted:
        return True, f"ceremony level {ceremony.level.value} is one of the evidence levels ({_names(wanted)})"
    return False, (f"ceremony level {ceremony.level.value} ({ceremony.reason}) is not one of the evidence levels "
                   f"({_names(wanted) or 'none'}; {EVIDENCE_LEVELS_ENV})")


def _names(levels: Iterable[CeremonyLevel]) -> str:
    return ", ".join(level.value for level in levels)


# -- the level a proposal is verified at ---------------------------------------------------------------
#
# The score chooses the level; a person may raise it (recorded with who and when), and only a recorded override with
# a reason may set it below the score's level. What each level adds: low = the deterministic gates only; standard =
# + the coach (a second model's review); strict = + the coach's full review (every gate message, the whole test
# file), a person's approval before promotion (auto-approve never covers it) and a larger attempt budget.

_RANK = {CeremonyLevel.LOW: 0, CeremonyLevel.STANDARD: 1, CeremonyLevel.STRICT: 2}
STRICT_EXTRA_ATTEMPTS = 2
MAX_LEVEL_REASON_CHARS = 500
MAX_ACTOR_CHARS = 200


class CeremonyChangeRefused(ValueError):
    """A level change that may not be recorded; the message says why and what would be accepted."""


@dataclass(frozen=True)
class LevelSetting:
    """A person's recorded level (the last one counts): who, when, and for an override why."""

    level: CeremonyLevel
    override: bool
    actor: str
    at: str
    reason: str | None = None


def rank(level: CeremonyLevel) -> int:
    return _RANK[level]


def effective_ceremony(base: Ceremony, setting: LevelSetting | None) -> Ceremony:
    """The level this proposal is verified at: the score's, or a person's when it is higher, or a person's recorded
    override (below the score's level). A setting that is neither (below the score without an override: e.g. the
    spec grew more complex since) does not lower it."""
    if setting is None or setting.level is base.level:
        return base
    if rank(setting.level) > rank(base.level):
        how = f"raised to {setting.level.value} by {setting.actor} at {setting.at}"
    elif setting.override:
        how = f"lowered to {setting.level.value} by {setting.actor} at {setting.at} (override: {setting.reason})"
    else:
        return base
    return dataclasses.replace(base, level=setting.level, reason=f"{base.reason}; {how}", score_level=base.level,
                               set_by=setting.actor)


def check_level_change(score_level: CeremonyLevel, wanted: CeremonyLevel, *, override: bool, reason: str,
                       actor: str) -> bool:
    """Validate a person's level for a proposal; True when it must be recorded as an override (below the score's
    level). CeremonyChangeRefused when it may not be recorded."""
    if not actor.strip() or len(actor) > MAX_ACTOR_CHARS or any(ch in actor for ch in "\r\n\x00"):
        raise CeremonyChangeRefused(f"a level change needs who sets it: --by WHO (one line, at most "
                                    f"{MAX_ACTOR_CHARS} characters)")
    if len(reason) > MAX_LEVEL_REASON_CHARS or "\x00" in reason:
        raise CeremonyChangeRefused(f"--reason is at most {MAX_LEVEL_REASON_CHARS} characters")
    below = rank(wanted) < rank(score_level)
    if below and not (override and reason.strip()):
        raise CeremonyChangeRefused(
            f"{wanted.value} is below the level the complexity score gives ({score_level.value}): lowering it needs "
            f"--override --reason TEXT (recorded in the ledger)")
    if override and not below:
        raise CeremonyChangeRefused(f"--override is only for a level below the score's ({score_level.value}); "
                                    f"{wanted.value} needs none")
    return below


def ceremony_plan(ceremony: Ceremony) -> dict[str, object]:
    """What the level runs and what it skips, for the verification report and the UI."""
    level = ceremony.level
    coach = level is not CeremonyLevel.LOW
    strict = level is CeremonyLevel.STRICT
    skipped = []
    if not coach:
        skipped.append("coach review (gate_coach): ceremony low runs the deterministic gates only")
    if not strict:
        skipped += ["full coach review (every gate message, the whole test file)" if coach else
                    "full coach review", "required human approval before promotion",
                    f"{STRICT_EXTRA_ATTEMPTS} extra attempts"]
    return {"level": level.value, "score_level": (ceremony.score_level or level).value, "reason": ceremony.reason,
            "coach": coach, "full_review": strict, "human_approval": strict,
            "extra_attempts": STRICT_EXTRA_ATTEMPTS if strict else 0, "skipped": skipped,
            "always": "zero-test and coverage gates block at every level"}


def budget_for(ceremony: Ceremony, base_budget: int) -> int:
    """The attempt budget at this level: strict adds STRICT_EXTRA_ATTEMPTS to the complexity-scaled budget."""
    return base_budget + (STRICT_EXTRA_ATTEMPTS if ceremony.level is CeremonyLevel.STRICT else 0)


def plan_markdown(plan: dict[str, object]) -> str:
    """The ceremony section of the verification report in a few lines, for the Dagster UI."""
    lines = [f"- level: **{plan.get('level')}** (score's level: {plan.get('score_level')}) — {plan.get('reason')}",
             f"- coach review: {'full' if plan.get('full_review') else 'yes' if plan.get('coach') else 'no'}; "
             f"human approval required: {'yes' if plan.get('human_approval') else 'no'}; "
             f"extra attempts: {plan.get('extra_attempts')}",
             f"- always: {plan.get('always')}"]
    skipped = plan.get("skipped")
    lines += [f"- skipped: {s}" for s in (skipped if isinstance(skipped, list) else [])]
    return "\n".join(lines)
