"""The research step: the note of a failed attempt and its escalation, and the model outcomes the router learns from."""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kavi.forge.attempt import canonical
from kavi.forge.context import ForgeContext
from kavi.forge.packet import load_packet
from kavi.forge.reverify import record_model_call
from kavi.forge.verify import VerifyOutcome
from kavi.ledger.records import BuildRow, LedgerRecordError, ProposalRow
from kavi.lifecycle import VETTED_BUILDER, FailureKind, ProposalStatus
from kavi.llm.client import LLMError
from kavi.llm.prompts import build_headers, render_advice_messages
from kavi.redact import Redactor
from kavi.research.classifier import Classification, classify
from kavi.research.escalation import EscalationInput, Trigger, triggers_for
from kavi.routing.complexity import attempt_budget
from kavi.routing.task_type import task_type
from kavi.verdicts import COUNTEREXAMPLE_GATES, GateResult


@dataclass(frozen=True)
class ResearchOutcome:
    build_id: str
    attempt: int
    kind: FailureKind
    fingerprint: str
    facts: dict[str, Any]
    triggers: list[str]
    escalated: bool
    status: ProposalStatus
    budget: int
    note_sha256: str


def _advice(ctx: ForgeContext, name: str, build: BuildRow, kind: FailureKind, facts: dict[str, Any]
            ) -> tuple[str | None, bool]:
    """Ask the model for advice when configured; (advice, unavailable). Never raises: a failure degrades."""
    if not ctx.settings.research_advice or not build.model:
        return None, False
    try:
        client = ctx.llm_factory()
        answer = client.complete(
            render_advice_messages(facts, failure_kind=kind.value),
            model=build.model, json_mode=False, headers=build_headers(name, build.attempt_number, "advice"),
            timeout_s=ctx.settings.advice_timeout_s,
        )
    except LLMError:
        record_model_call(ctx, "advice", name, build.build_id, build.model, None)
        return None, True
    record_model_call(ctx, "advice", name, build.build_id, build.model, answer)
    return answer.text.strip()[:2000] or None, False


def research(ctx: ForgeContext, name: str, verify_outcome: VerifyOutcome, advice: str | None = None
             ) -> ResearchOutcome:
    """File the research note of a failed attempt, decide escalation, record the model outcome."""
    if verify_outcome.passed or verify_outcome.build_failure is None:
        raise ValueError("research notes are written for failed attempts only")
    with ctx.records.session():
        build = ctx.records.get_build(verify_outcome.build_id)
        if build is None:
            raise LedgerRecordError(f"no build {verify_outcome.build_id}")
        row = ctx.records.require_proposal(name)
        previous = [n for n in ctx.records.research_notes(name) if n["attempt"] < build.attempt_number]
        parent = ctx.records.get_build(build.parent_build_id) if build.parent_build_id else None
    cls = classify(verify_outcome.build_failure)
    infra = cls.kind is FailureKind.INFRASTRUCTURE
    # The endpoint failed (after the client's own retries): not the model's outcome, no attempt of its budget.
    endpoint = cls.kind is FailureKind.ENDPOINT_UNAVAILABLE
    # No endpoint for this proposal (the recorded model without a recording): the person's configuration, not the
    # model and not a failure to review. Like infrastructure it costs the model nothing; it escalates nothing.
    unconfigured = cls.kind is FailureKind.LLM_NOT_CONFIGURED
    vetted = build.model == VETTED_BUILDER
    not_model = infra or unconfigured or endpoint or vetted
    # Infrastructure failures are not the model's: they spend none of its attempt budget and are not compared
    # with its failures for a stuck loop (their own repeats are, so a broken tool escalates instead of looping).
    model_previous = [n for n in previous if n["failure_kind"] not in NOT_THE_MODELS]
    same_side = [n for n in previous if _side(n["failure_kind"]) == _side(cls.kind.value)]
    outage = _outage(previous, cls) if endpoint else None
    packet = load_packet(ctx, build)
    prev_packet_text: str | None = None
    if parent is not None and parent.packet_sha256:
        prev_packet_text = json.dumps(load_packet(ctx, parent).get("messages"), indent=1)
    budget = int(packet.get("attempt_budget") or attempt_budget(row.complexity or 0.0))
    advice_unavailable = False
    if advice is None and not not_model:
        advice, advice_unavailable = _advice(ctx, name, build, cls.kind, cls.facts)
    if advice:
        advice = Redactor.for_proposal(row.proposal).message(advice, 2000)
    triggers = triggers_for(
        EscalationInput(
            kind=cls.kind,
            fingerprint=cls.fingerprint,
            previous_fingerprints=[n["fingerprint"] for n in same_side],
            attempt=len(model_previous) + (0 if not_model else 1),
            budget=budget,
            declared_class=row.proposal.side_effect_class,
            advice=advice,
            packet_text=json.dumps(packet.get("messages"), indent=1),
            previous_packet_text=prev_packet_text,
            llm_terminal=verify_outcome.build_failure.llm_terminal,
        )
    )
    if advice_unavailable and Trigger.AMBIGUOUS not in triggers:
        triggers.append(Trigger.AMBIGUOUS)  # advice was asked for and the endpoint could not give it
    if infra and cls.facts.get("retryable") is False:
        triggers.append(Trigger.PROMPT_TOO_LONG)
    if unconfigured:
        triggers = []
    if vetted and not (infra or unconfigured or endpoint):
        triggers = [Trigger.VETTED_REJECTED]  # the third party's code: nothing for a model to retry
    if outage is not None:
        # One outage is not a reason to wake a person: only a sustained one is.
        triggers = [Trigger.ENDPOINT_OUTAGE] if outage["attempts_in_a_row"] >= ctx.settings.endpoint_outage_attempts \
            else []
        cls.facts["outage"] = {**outage, "escalates_at": ctx.settings.endpoint_outage_attempts}
    escalated = bool(triggers)
    if cls.kind is FailureKind.GATE_VIOLATION:
        status = ProposalStatus.GATE_VIOLATION
    elif escalated:
        status = ProposalStatus.ESCALATED
    else:
        status = ProposalStatus.FAILED
    note = {
        "kind": "RESEARCH_NOTE",
        "build_id": build.build_id,
        "proposal": name,
        "attempt": build.attempt_number,
        "failure_kind": cls.kind.value,
        "fingerprint": cls.fingerprint,
        "key_facts": cls.key_facts,
        "facts": cls.facts,
        "triggers": [str(t) for t in triggers],
        "escalated": escalated,
        "attempt_budget": budget,
        "counts_against_model": not not_model,
        "advice": advice,
        "next": (f"configure a model endpoint (KAVI_LLM_BASE_URL, KAVI_LLM_MODELS), then kavi forge {name}"
                 if unconfigured
                 else _outage_next(name, outage, escalated, ctx.settings.endpoint_outage_attempts)
                 if outage is not None
                 else "waits for a person: kavi retry NAME --by WHO [--hint TEXT]" if escalated
                 else f"{cls.facts['not_judged']}: the retry sensor tries again after a backoff (kavi forge NAME to "
                      "try now)" if infra and cls.facts.get("not_judged")
                 else "the forge's own environment failed, not the model: the retry sensor tries again after a "
                      "backoff (kavi forge NAME to try now)" if infra
                 else "the next attempt may be requested (kavi forge NAME, or the retry sensor)"),
    }
    counterexamples = _counterexamples(verify_outcome.build_failure.gate_results)
    if counterexamples:
        # Where the candidate and the independent implementation disagreed: both outputs, for the next packet (its
        # prompt carries the gate's messages) and for a person, who may settle one as a holdout with the right answer.
        note["counterexamples"] = counterexamples
        note["settle"] = (f"kavi holdout add {name} --counterexample N --expected JSON --by WHO "
                          f"(N from 1 to {len(counterexamples)}) records the right answer as a new holdout")
    ref = ctx.store.put(canonical(note), "research_note")
    reason = f"{cls.kind.value}" + (f"; escalated: {', '.join(triggers)}" if triggers else "")
    if outage is not None and escalated:
        reason += (f" ({outage['attempts_in_a_row']} attempts in a row; endpoint {outage['endpoint'] or '?'}, last: "
                   f"{outage['last_status'] or '?'})")
    with ctx.records.session():  # the note, the status and the model outcome land together
        ctx.records.record_research(
            build_id=build.build_id, name=name, attempt=build.attempt_number, failure_kind=cls.kind.value,
            fingerprint=cls.fingerprint, facts=cls.facts, triggers=[str(t) for t in triggers], advice=advice,
            escalated=escalated, note=ref, lineage_parent=verify_outcome.report_sha256,
        )
        ctx.records.set_status(name, status, build_id=build.build_id, reason=reason)
        if not not_model:  # the router learns only from what the model did
            _record_outcome(ctx, build, row, success=False, failure_kind=cls.kind.value)
    return ResearchOutcome(build.build_id, build.attempt_number, cls.kind, cls.fingerprint, cls.facts,
                           [str(t) for t in triggers], escalated, status, budget, ref.sha256)


def _counterexamples(results: Sequence[GateResult]) -> list[dict[str, Any]]:
    """The failing differential and adequacy gates' counterexamples, in that order (as kavi holdout numbers them)."""
    out: list[dict[str, Any]] = []
    for r in results:
        found = r.details.get("counterexamples") if r.gate in COUNTEREXAMPLE_GATES and not r.ok else None
        out += [dict(c) for c in found if isinstance(c, dict)] if isinstance(found, list) else []
    return out


NOT_THE_MODELS = (FailureKind.INFRASTRUCTURE.value, FailureKind.LLM_NOT_CONFIGURED.value,
                  FailureKind.ENDPOINT_UNAVAILABLE.value)


def _side(kind: str) -> str:
    """Whose failure a kind is, for the stuck-loop comparison: the forge's environment, the endpoint, or the model
    (an outage between two identical model failures neither breaks nor extends their streak)."""
    if kind == FailureKind.INFRASTRUCTURE.value:
        return "infrastructure"
    if kind == FailureKind.ENDPOINT_UNAVAILABLE.value:
        return "endpoint"
    return "model"


def _outage(previous: list[dict[str, Any]], cls: Classification) -> dict[str, Any]:
    """This endpoint failure with the ones right before it: how many in a row, since when, what it last did."""
    streak = []
    for note in reversed(previous):
        if note["failure_kind"] != FailureKind.ENDPOINT_UNAVAILABLE.value:
            break
        streak.append(note)
    since = streak[-1]["created_at"] if streak else None
    return {"attempts_in_a_row": len(streak) + 1, "since": str(since) if since is not None else None,
            "endpoint": cls.facts.get("endpoint"), "last_status": cls.facts.get("endpoint_status")}


def _outage_next(name: str, outage: dict[str, Any], escalated: bool, limit: int) -> str:
    where = f"the model endpoint {outage['endpoint']}" if outage.get("endpoint") else "the model endpoint"
    status = f" (last: {outage['last_status']})" if outage.get("last_status") else ""
    if escalated:
        return (f"{where} has failed {outage['attempts_in_a_row']} attempts in a row{status}: a sustained outage "
                f"waits for a person; check the endpoint, then kavi retry {name} --by WHO")
    return (f"{where} failed{status}, not the model: the retry sensor tries again after a backoff (kavi forge {name} "
            f"to try now); {limit - outage['attempts_in_a_row']} more in a row and it waits for a person")


def record_outcome(ctx: ForgeContext, name: str, build: BuildRow, *, success: bool, failure_kind: str | None) -> None:
    if not build.model:
        return
    _record_outcome(ctx, build, ctx.records.require_proposal(name), success=success, failure_kind=failure_kind)


def _record_outcome(ctx: ForgeContext, build: BuildRow, row: ProposalRow, *, success: bool,
                    failure_kind: str | None) -> None:
    if not build.model or build.model == VETTED_BUILDER:
        return  # a vetted attempt is no model's outcome: the router learns nothing from it
    tokens = (build.prompt_tokens or 0) + (build.completion_tokens or 0)
    ctx.records.record_model_outcome(
        build_id=build.build_id, name=build.proposal_name, model=build.model,
        task_type=task_type(row.proposal.side_effect_class, row.complexity or 0.0), success=success,
        failure_kind=failure_kind, latency_ms=build.latency_ms, tokens=tokens or None, cost_usd=build.cost_usd,
    )


def record_success(ctx: ForgeContext, name: str, build_id: str) -> None:
    with ctx.records.session():
        build = ctx.records.get_build(build_id)
        if build is not None:
            record_outcome(ctx, name, build, success=True, failure_kind=None)
