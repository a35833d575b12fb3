"""The capability surfaces of a skill's stored versions (kavi.promotion.surface reads one from code and spec)."""

import contextlib
from typing import Any

from kavi.forge.context import ForgeContext
from kavi.ledger.records import BuildRow
from kavi.promotion.surface import Surface, observed, surface_of, widening
from kavi.proposals.model import Proposal


def version_surface(ctx: ForgeContext, name: str, source_sha256: str, spec_sha256: str | None,
                    side_effect_class: str | None) -> Surface:
    """The surface of a stored version: its source, and the proposal revision it was built from (the current one
    when that revision's spec is not in the store)."""
    proposal = ctx.records.require_proposal(name).proposal
    if spec_sha256:
        with contextlib.suppress(OSError, KeyError, ValueError):
            proposal = Proposal.model_validate_json(ctx.store.get(spec_sha256), context={"recorded": True})
    declared = surface_of(ctx.store.get(source_sha256), proposal, side_effect_class)
    if declared.side_effect_class == "READ_ONLY":
        return declared  # no handle, so no effect to observe: the log is not read
    return observed(declared, observed_effects(ctx, name, source_sha256))


OBSERVED_TAIL_BYTES = 16 * 1024 * 1024  # the execution log's most recent part read for a version's effects


def observed_effects(ctx: ForgeContext, name: str, source_sha256: str) -> list[dict[str, Any]]:
    """The effects the runtime recorded for this version's calls in the execution log's last
    OBSERVED_TAIL_BYTES (a promotion never reads a log of any size whole)."""
    from kavi.runtime.records import ExecutionRecord, parse_log_line

    path = ctx.home.executions_log
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - OBSERVED_TAIL_BYTES))
            lines = fh.read().split(b"\n")[1 if size > OBSERVED_TAIL_BYTES else 0:]
    except OSError:
        return []
    found: list[dict[str, Any]] = []
    for raw in lines:
        if name.encode() not in raw or source_sha256.encode() not in raw:
            continue
        record = parse_log_line(raw)
        if isinstance(record, ExecutionRecord) and record.skill_name == name and record.source_hash == source_sha256:
            found += record.effects or []
    return found


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
