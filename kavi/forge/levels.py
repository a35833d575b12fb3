"""A proposal's ceremony level as the forge applies it: the complexity score's, unless a person recorded another.

Raising is always allowed (recorded with who and when); setting a level below the score's needs an override with a
reason (recorded); nothing else lowers it (see ceremony.effective_ceremony).
"""

from dataclasses import dataclass

from kavi.forge.ceremony import (
    Ceremony,
    CeremonyChangeRefused,
    CeremonyLevel,
    LevelSetting,
    ceremony_for,
    check_level_change,
    effective_ceremony,
)
from kavi.ledger.coach_records import LevelRow, levels, record_level
from kavi.ledger.records import ForgeRecords
from kavi.proposals.model import Proposal


def setting_of(row: LevelRow) -> LevelSetting:
    """A recorded level as the setting effective_ceremony weighs."""
    return LevelSetting(CeremonyLevel(row.level), row.override, row.actor, row.created_at, row.reason)


def latest_setting(records: ForgeRecords, name: str) -> LevelSetting | None:
    rows = levels(records, name)
    return setting_of(rows[-1]) if rows else None


def proposal_ceremony(records: ForgeRecords, name: str, proposal: Proposal) -> Ceremony:
    """The level NAME is verified at now (the score's, or the person's recorded one)."""
    return effective_ceremony(ceremony_for(proposal), latest_setting(records, name))


@dataclass(frozen=True)
class LevelChange:
    name: str
    before: Ceremony
    after: Ceremony
    override: bool


def set_level(records: ForgeRecords, name: str, level: str, *, actor: str, override: bool = False,
              reason: str = "") -> LevelChange:
    """Record a person's ceremony level for NAME. CeremonyChangeRefused (a ValueError) when the rules forbid it;
    LedgerRecordError when NAME is not a proposal."""
    try:
        wanted = CeremonyLevel(level.strip().lower())
    except ValueError:
        raise CeremonyChangeRefused(f"level {level[:40]!r} must be one of low, standard, strict") from None
    with records.session():
        row = records.require_proposal(name)
        base = ceremony_for(row.proposal)
        before = effective_ceremony(base, latest_setting(records, name))
        is_override = check_level_change(base.level, wanted, override=override, reason=reason, actor=actor)
        record_level(records, name=name, level=wanted.value, score_level=base.level.value, override=is_override,
                     reason=reason.strip() or None, actor=actor.strip())
        after = effective_ceremony(base, latest_setting(records, name))
    return LevelChange(name, before, after, is_override)
