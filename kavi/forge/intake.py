"""Intake: a validated proposal recorded in the ledger with its complexity score."""

from kavi.forge.context import ForgeContext
from kavi.proposals.model import Proposal
from kavi.routing.complexity import score_complexity


def intake(ctx: ForgeContext, proposal: Proposal, source_path: str | None, actor: str = "kavi") -> bool:
    """Record a validated proposal with its complexity score; False when the identical spec is already in."""
    score = score_complexity(proposal)
    return ctx.records.register_proposal(proposal, source_path=source_path, complexity=score.score, actor=actor)
