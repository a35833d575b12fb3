"""The independent implementation: the same skill written by a second model from the same spec (N-version evidence).

Holdouts written by a person are few; a wrong solution that passes them can still be trusted. A second model that
writes the skill from the builder's view of the spec (never the holdouts, the builder's code, its tests or its
failures) gives the acceptance evidence an oracle for generated inputs: where the two disagree, one of them is
wrong, and the attempt is not trusted until a person settles it (`kavi holdout add`).

The request is made once per proposal spec (its digest is the cache key, so a holdout added asks again) and by a
model other than the builder's. Its outcome is recorded like a build's model call, but it is never the builder's
outcome: an unusable answer omits the comparison, and the router learns nothing from it.

It is asked for while the build is being made (prefetch_independent, started by the build step once the packet has
routed the builder's model): with a live model each answer takes seconds, and asking only in the verification made
every attempt wait for two answers one after the other. The background thread only waits for the endpoint; what
the answer becomes (artifacts, the ledger row naming the verified build, a model set aside) is decided and written
by the verification in the step's own thread, exactly as when it asks itself.
"""

import dataclasses
import threading
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from kavi.forge.context import ForgeContext
from kavi.ledger.artifacts import ArtifactRef, sha256_bytes
from kavi.ledger.records import BuildRow, IndependentRow
from kavi.llm.answer import BadAnswerError, parse_independent_answer
from kavi.llm.client import Completion, LLMClient, LLMError, LLMErrorKind
from kavi.llm.prompts import PromptTooLarge, build_headers, render_independent_messages
from kavi.proposals.model import Proposal
from kavi.redact import Redactor
from kavi.routing.complexity import score_complexity
from kavi.routing.posteriors import prior_params
from kavi.routing.task_type import task_type

OK = "OK"
UNUSABLE = "UNUSABLE"
LLM_ERROR = "LLM_ERROR"
NO_SECOND_MODEL = "no second model configured"
# Outcomes a later attempt of the same spec reuses. A transient endpoint failure is not one: the next attempt asks
# again. A model the endpoint does not know is, as the router treats it (and it is set aside).
_CACHED_LLM_KINDS = frozenset({LLMErrorKind.MODEL_NOT_FOUND, LLMErrorKind.AUTH, LLMErrorKind.QUOTA,
                               LLMErrorKind.BAD_REQUEST, LLMErrorKind.PROMPT_TOO_LONG})


@dataclass(frozen=True)
class ModelChoice:
    model: str | None
    reason: str


@dataclass(frozen=True)
class IndependentOutcome:
    """What the verification gets: the source to compare with (or None) and why."""

    source: bytes | None
    model: str | None
    sha256: str | None
    status: str  # OK, UNUSABLE, LLM_ERROR, or "omitted" when nothing was asked
    reason: str
    choice_reason: str = ""
    reused: bool = False
    independent_id: str | None = None

    @property
    def label(self) -> str:
        return self.model or ""

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "sha256": self.sha256, "status": self.status, "reason": self.reason,
                "choice": self.choice_reason, "reused": self.reused, "request": self.independent_id}


def choose_model(models: Sequence[str], builder: str | None, *, counts: Mapping[str, tuple[int, int, float | None]],
                 set_aside: Mapping[str, str], prior_weight: float) -> ModelChoice:
    """The second model: never the builder's, never one set aside; among the rest the one with the highest
    posterior mean success on this task type (the most useful oracle), ties to the configured order."""
    others = [m for m in dict.fromkeys(models) if m != builder and m not in set_aside]
    if not others:
        skipped = [m for m in models if m in set_aside and m != builder]
        why = f" ({', '.join(skipped)} set aside)" if skipped else ""
        return ModelChoice(None, f"{NO_SECOND_MODEL}: the only model{'s' if len(models) > 1 else ''} "
                                 f"{'are' if len(models) > 1 else 'is'} the builder's ({builder}){why}")
    a0, b0 = prior_params(prior_weight)

    def mean(model: str) -> float:
        s, f, _ = counts.get(model, (0, 0, None))
        return (a0 + s) / (a0 + b0 + s + f)

    best = max(others, key=lambda m: (mean(m), -others.index(m)))
    s, f, _ = counts.get(best, (0, 0, None))
    return ModelChoice(best, f"{best}: not the builder ({builder}); highest posterior mean success among "
                             f"{', '.join(others)} ({mean(best):.2f} after {s} success(es), {f} failure(s))")


def _cached(rows: Sequence[IndependentRow], builder: str | None) -> IndependentRow | None:
    """The latest reusable outcome for this spec by a model other than the builder's."""
    for row in reversed(rows):
        if row.model == builder:
            continue
        if row.status in (OK, UNUSABLE) or (row.status == LLM_ERROR and (row.reason or "").split(":")[0] in
                                            {str(k) for k in _CACHED_LLM_KINDS}):
            return row
    return None


def _from_row(ctx: ForgeContext, row: IndependentRow) -> IndependentOutcome:
    if row.status == OK and row.source_sha256:
        return IndependentOutcome(ctx.store.get(row.source_sha256), row.model, row.source_sha256, OK,
                                  f"reused the implementation by {row.model} (request {row.independent_id})",
                                  row.choice_reason, True, row.independent_id)
    return IndependentOutcome(None, row.model, None, row.status,
                              f"the independent model's answer was not usable ({row.reason}); not compared",
                              row.choice_reason, True, row.independent_id)


@dataclass(frozen=True)
class _Prefetch:
    client: LLMClient
    choice: ModelChoice
    future: "Future[Completion]"


# Requests in flight in this process, one per (ledger, proposal, spec digest): a second prefetch of the same spec
# starts nothing, and the verification takes (removes) the entry. Bounded, so a process whose verifications never
# come cannot grow it without end.
MAX_IN_FLIGHT = 256
_in_flight: dict[tuple[str, str, str], _Prefetch] = {}
_in_flight_lock = threading.Lock()


def _key(ctx: ForgeContext, name: str, spec_sha256: str) -> tuple[str, str, str]:
    return (str(ctx.home.ledger_path), name, spec_sha256)


def _choose(ctx: ForgeContext, client: LLMClient, proposal: Proposal, builder: str | None) -> ModelChoice:
    ttype = task_type(proposal.side_effect_class, score_complexity(proposal).score)
    with ctx.records.session():
        return choose_model(client.settings.models, builder, counts=ctx.records.outcome_counts(ttype),
                            set_aside=ctx.records.models_set_aside(client.config_fingerprint),
                            prior_weight=ctx.settings.prior_weight)


def _messages(client: LLMClient, name: str, proposal: Proposal) -> list[dict[str, str]]:
    return render_independent_messages(proposal.builder_view(), skill_name=name, class_name=proposal.class_name,
                                       max_chars=client.settings.max_prompt_chars)


def _request(client: LLMClient, messages: list[dict[str, str]], model: str, name: str) -> Completion:
    return client.complete(messages, model=model, json_mode=True, headers=build_headers(name, 1, "independent"))


def prefetch_independent(ctx: ForgeContext, name: str, builder: str | None, proposal: Proposal, spec_sha256: str
                         ) -> bool:
    """Start asking for this spec's independent implementation in a background thread; True when a request
    started (not when one is in flight or reusable, there is no second model, or the prompt is over the bound)."""
    key = _key(ctx, name, spec_sha256)
    with _in_flight_lock:
        if key in _in_flight or len(_in_flight) >= MAX_IN_FLIGHT:
            return False
    with ctx.records.session():
        rows = ctx.records.independents(name, spec_sha256)
    if _cached(rows, builder) is not None:
        return False
    client = ctx.llm_factory()
    choice = _choose(ctx, client, proposal, builder)
    if choice.model is None:
        return False
    try:
        messages = _messages(client, name, proposal)
    except PromptTooLarge:
        return False
    future: Future[Completion] = Future()
    with _in_flight_lock:
        if key in _in_flight or len(_in_flight) >= MAX_IN_FLIGHT:
            return False
        _in_flight[key] = _Prefetch(client, choice, future)
    model = choice.model

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(_request(client, messages, model, name))
        except BaseException as err:  # handed to the verification, which classifies it as when it asks itself
            future.set_exception(err)

    # A daemon thread: a run worker whose build failed exits without waiting for an answer nobody will take.
    threading.Thread(target=run, name=f"kavi-independent-{name}", daemon=True).start()
    return True


def _take_prefetch(ctx: ForgeContext, name: str, spec_sha256: str) -> _Prefetch | None:
    with _in_flight_lock:
        return _in_flight.pop(_key(ctx, name, spec_sha256), None)


def settle_prefetch(ctx: ForgeContext, name: str, build: BuildRow, proposal: Proposal, spec_sha256: str) -> None:
    """A build that failed is not verified, but the request its step started was made (and maybe paid for): its
    answer is recorded like any other, so the spend is in the ledger and the next attempt of the spec reuses it."""
    pending = _take_prefetch(ctx, name, spec_sha256)
    if pending is not None and pending.choice.model != build.model:
        _ask(ctx, pending.client, name, build, proposal, spec_sha256, pending.choice, pending.future)


def obtain_independent(ctx: ForgeContext, name: str, build: BuildRow, proposal: Proposal, spec_sha256: str
                       ) -> IndependentOutcome:
    """The independent implementation for this build: the answer of the request the build step started when there
    is one, else reused from the ledger when this spec already has one by a model other than the builder's,
    otherwise asked for once. Never raises for the model's sake: an LLM error or an unusable answer is recorded as
    the independent model's failure and the comparison is omitted with the reason."""
    pending = _take_prefetch(ctx, name, spec_sha256)
    if pending is not None and pending.choice.model != build.model:
        return _ask(ctx, pending.client, name, build, proposal, spec_sha256, pending.choice, pending.future)
    with ctx.records.session():
        rows = ctx.records.independents(name, spec_sha256)
    hit = _cached(rows, build.model)
    if hit is not None:
        return _from_row(ctx, hit)
    client = ctx.llm_factory()
    choice = _choose(ctx, client, proposal, build.model)
    if choice.model is None:
        return IndependentOutcome(None, None, None, "omitted", choice.reason, choice.reason)
    return _ask(ctx, client, name, build, proposal, spec_sha256, choice)


def _ask(ctx: ForgeContext, client: LLMClient, name: str, build: BuildRow, proposal: Proposal, spec_sha256: str,
         choice: ModelChoice, pending: "Future[Completion] | None" = None) -> IndependentOutcome:
    model = str(choice.model)
    redactor = Redactor.for_proposal(proposal, extra_secrets=[client.settings.api_key])
    row = IndependentRow(f"{name}-ind-{uuid.uuid4().hex[:8]}", name, spec_sha256, build.build_id, model,
                         choice.reason, client.endpoint_label, LLM_ERROR, None, None, None)
    spec_ref = ctx.store.put(proposal.canonical_json().encode(), "proposal_spec")
    artifacts: list[tuple[ArtifactRef, str, str]] = []
    source: bytes | None = None
    try:
        if pending is not None:  # asked while the build was made: its answer (or its error) is this one
            completion = pending.result()
        else:
            completion = _request(client, _messages(client, name, proposal), model, name)
        row = dataclasses.replace(row, prompt_tokens=completion.prompt_tokens,
                                  completion_tokens=completion.completion_tokens, latency_ms=completion.latency_ms,
                                  cost_usd=completion.cost_usd)
        answer_ref = ctx.store.put(completion.text.encode(), "independent_answer")
        artifacts.append((answer_ref, spec_ref.sha256, "independent_answer_to"))
        row = dataclasses.replace(row, answer_sha256=answer_ref.sha256)
        content = parse_independent_answer(completion.text, name).encode()
        source_ref = ctx.store.put(content, "independent_source")
        artifacts.append((source_ref, answer_ref.sha256, "file_of"))
        row = dataclasses.replace(row, status=OK, source_sha256=source_ref.sha256,
                                  reason=f"{len(content)} bytes from {model}")
        source = content
    except PromptTooLarge as err:
        return IndependentOutcome(None, model, None, "omitted", f"not asked: {err}", choice.reason)
    except LLMError as err:
        row = dataclasses.replace(row, status=LLM_ERROR, reason=redactor.message(f"{err.kind}: {err}", 500))
        if err.kind is LLMErrorKind.MODEL_NOT_FOUND:  # a fact about the model, whoever calls it
            ctx.records.set_model_aside(client.config_fingerprint, model, f"{err.kind}: {err}"[:300], build.build_id)
    except BadAnswerError as err:
        row = dataclasses.replace(row, status=UNUSABLE, reason=redactor.message(str(err), 500))
    with ctx.records.session():
        ctx.records.record_artifact(spec_ref)
        ctx.records.record_independent(row, artifacts=artifacts)
    if source is None:
        what = "model call failed" if row.status == LLM_ERROR else "answer was not usable"
        return IndependentOutcome(None, model, None, row.status,
                                  f"the independent model's {what} ({row.reason}); not compared", choice.reason,
                                  False, row.independent_id)
    return IndependentOutcome(source, model, sha256_bytes(source), OK, f"asked {model} (request {row.independent_id})",
                              choice.reason, False, row.independent_id)
