"""The capability surfaces of a skill's stored versions (kavi.promotion.surface reads one from code and spec)."""

import contextlib

from kavi.forge.context import ForgeContext
from kavi.ledger.records import BuildRow
from kavi.promotion.surface import Surface, surface_of, widening
from kavi.proposals.model import Proposal


def version_surface(ctx: ForgeContext, name: str, source_sha256: str, spec_sha256: str | None,
                    side_effect_class: str | None) -> Surface:
    """The surface of a stored version: its source, and the proposal revision it was built from (the current one
    when that revision's spec is not in the store)."""
    proposal = ctx.records.require_proposal(name).proposal
    if spec_sha256:
        with contextlib.suppress(OSError, KeyError, ValueError):
            proposal = Proposal.model_validate_json(ctx.store.get(spec_sha256), context={"recorded": True})
    return surface_of(ctx.store.get(source_sha256), proposal, side_effect_class)


def widened_surface(ctx: ForgeContext, name: str, build: BuildRow) -> list[str]:
    """What the build reaches beyond NAME's latest trusted version (empty for a first version)."""
    current = ctx.records.trusted(name)
    if not current or not build.skill_sha256:
        return []
    trusted = current[0]
    promo = ctx.records.promotion_for_build(trusted.build_id)
    old = version_surface(ctx, name, trusted.source_sha256, promo.spec_sha256 if promo else None,
                          trusted.side_effect_class.value)
    row = ctx.records.require_proposal(name)
    new = surface_of(ctx.store.get(build.skill_sha256), row.proposal)
    return widening(old, new)
