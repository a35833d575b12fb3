"""The packet step: the frozen BUILD_PACKET of the next attempt (spec view, prior failures, hints, the routed model),
and the refusal to start an attempt of a decomposed proposal."""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kavi.forge.attempt import canonical, now
from kavi.forge.ceremony import budget_for
from kavi.forge.context import ForgeContext
from kavi.forge.levels import proposal_ceremony
from kavi.gates.runner import prestart as prestart_gates
from kavi.ledger.records import BuildRow, LedgerRecordError, ProposalRow, new_build_id
from kavi.lifecycle import ProposalStatus
from kavi.llm.client import LLMClient
from kavi.llm.prompts import render_build_messages
from kavi.proposals.model import Proposal
from kavi.routing.complexity import attempt_budget, score_complexity
from kavi.routing.posteriors import prior_params
from kavi.routing.task_type import task_type
from kavi.routing.thompson import choose_from_params


def proposal_task_type(ctx: ForgeContext, proposal: Proposal) -> str:
    return task_type(proposal.side_effect_class, score_complexity(proposal).score)


@dataclass(frozen=True)
class PacketOutcome:
    build_id: str
    attempt: int
    parent_build_id: str | None
    model: str
    packet_sha256: str
    routing: dict[str, Any]
    prior_failures: int
    hints: list[str]
    budget: int


def _prior_failures(ctx: ForgeContext, name: str) -> list[dict[str, Any]]:
    out = []
    for note in ctx.records.research_notes(name):
        out.append(
            {
                "attempt": note["attempt"],
                "build_id": note["build_id"],
                "failure_kind": note["failure_kind"],
                "facts": note["facts"],
                "advice": note["advice"],
            }
        )
    return out


class ProposalDecomposed(LedgerRecordError):
    """The proposal was split into children (kavi.decompose): it takes no attempt of its own while they forge,
    and it is verified through its composition once they are trusted."""


def refuse_if_decomposed(row: ProposalRow) -> None:
    if row.status is ProposalStatus.DECOMPOSED:
        name = row.proposal.name
        raise ProposalDecomposed(
            f"{name} is DECOMPOSED: its children are forged instead, and it is verified through its composition once "
            f"they are trusted; `kavi tree {name}` shows where they stand, `kavi decompose {name}` advances it")


def prepare_packet(ctx: ForgeContext, name: str, run_id: str | None,
                   routing_as_of: datetime | None = None) -> PacketOutcome:
    """Freeze the BUILD_PACKET for the next attempt: spec view, prior failures, hints, the routed model (routed on
    the outcomes recorded up to `routing_as_of` when the attempt belongs to a batch: kavi/forge/batch.py)."""
    prestart_gates()  # the gates' warm runner boots in the background while the packet and the build happen
    client = ctx.llm_factory()
    with ctx.records.session():  # one connection and one transaction for the whole step
        return _prepare_packet(ctx, name, run_id, client, routing_as_of)


def _prepare_packet(ctx: ForgeContext, name: str, run_id: str | None, client: LLMClient,
                    routing_as_of: datetime | None = None) -> PacketOutcome:
    row = ctx.records.require_proposal(name)
    refuse_if_decomposed(row)  # the retry sensor or a materialize of the partition must not start a parent attempt
    proposal = row.proposal
    builds = ctx.records.builds(name)
    attempt = (builds[-1].attempt_number + 1) if builds else 1
    parent = builds[-1].build_id if builds else None
    build_id = new_build_id(name, attempt, row.spec_sha256, parent)
    ttype = proposal_task_type(ctx, proposal)
    # The Beta posteriors of this task type, from outcome counts the ledger sums (not every outcome row):
    # Beta(α0 + successes, β0 + failures), exactly what compute_posteriors + choose_model would use.
    a0, b0 = prior_params(ctx.settings.prior_weight)
    counts = ctx.records.outcome_counts(ttype, as_of=routing_as_of)
    decision = choose_from_params(
        {model: (a0 + s, b0 + f) for model, (s, f, _) in counts.items()},
        task_type=ttype,
        models=client.settings.models,
        seed=build_id,
        costs=ctx.settings.model_costs or None,
        set_aside=ctx.records.models_set_aside(client.config_fingerprint),
        prior_weight=ctx.settings.prior_weight,
        observed_costs={model: c for model, (_, _, c) in counts.items() if c is not None},
    )
    prior = _prior_failures(ctx, name)
    hints = [h["hint"] for h in ctx.records.take_retry_hints(name, build_id) if h["hint"]]
    messages = render_build_messages(
        proposal.builder_view(),
        attempt=attempt,
        skill_name=name,
        class_name=proposal.class_name,
        prior_failures=prior,
        hint="\n".join(hints) or None,
        max_chars=client.settings.max_prompt_chars,
    )
    budget = attempt_budget(row.complexity if row.complexity is not None else score_complexity(proposal).score)
    budget = budget_for(proposal_ceremony(ctx.records, name, proposal), budget)  # strict: a larger budget
    packet = {
        "packet_version": 1,
        "kind": "BUILD_PACKET",
        "build_id": build_id,
        "proposal": name,
        "spec_sha256": row.spec_sha256,
        "attempt": attempt,
        "attempt_budget": budget,
        "parent_build_id": parent,
        "task_type": ttype,
        "spec": proposal.builder_view(),
        "prior_failures": prior,
        "hints": hints,
        "routing": decision.to_dict(),
        "model": decision.model,
        "endpoint": client.endpoint_label,
        "messages": messages,
        "created_at": now(),
    }
    if routing_as_of is not None:  # replaying the choice needs the outcomes up to this moment
        packet["routing_as_of"] = routing_as_of.isoformat()
    ref = ctx.store.put(canonical(packet), "build_packet")
    spec_ref = ctx.store.put(proposal.canonical_json().encode(), "proposal_spec")
    ctx.records.record_artifact(spec_ref)
    ctx.records.start_build(
        name,
        run_id=run_id,
        model=decision.model,
        endpoint=client.endpoint_label,
        packet=ref,
        build_id=build_id,
        attempt=attempt,
        parent_build_id=parent,
        lineage_parent=spec_ref.sha256,
    )
    return PacketOutcome(build_id, attempt, parent, decision.model, ref.sha256, decision.to_dict(), len(prior), hints,
                         budget)


def load_packet(ctx: ForgeContext, build: BuildRow) -> dict[str, Any]:
    if not build.packet_sha256:
        raise LedgerRecordError(f"build {build.build_id} has no packet")
    data: dict[str, Any] = json.loads(ctx.store.get(build.packet_sha256))
    return data
