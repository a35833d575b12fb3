"""One attempt, step by step: packet → build → verify → research; and promotion of a verified build."""

import dataclasses
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kavi.build.allowlist import check_allowlist, skill_path, test_path
from kavi.build.sandbox_dir import create_sandbox, write_files
from kavi.forge.ceremony import Ceremony, CeremonyLevel, budget_for, ceremony_plan, evidence_decision
from kavi.forge.coach import review as coach_review
from kavi.forge.context import ForgeContext
from kavi.forge.fingerprint import judging_policy_path
from kavi.forge.independent import IndependentOutcome, obtain_independent, prefetch_independent, settle_prefetch
from kavi.forge.levels import proposal_ceremony
from kavi.forge.provenance import attest_promotion
from kavi.forge.reverify import fingerprint_for, record_forge_verification, record_model_call
from kavi.gates.differential import EvidenceConfig
from kavi.gates.infra import describe_oserror, is_infra_oserror
from kavi.gates.runner import GateConfig, prepare_generated_inputs, run_gates
from kavi.gates.runner import prestart as prestart_gates
from kavi.gates.tools import mypy_cache_warm, warm_mypy_cache
from kavi.ledger.artifacts import ArtifactRef, sha256_bytes
from kavi.ledger.records import BuildRow, LedgerRecordError, PromotionRow, ProposalRow, new_build_id
from kavi.lifecycle import FailureKind, ProposalStatus, Verdict
from kavi.llm.answer import BadAnswerError, parse_build_answer
from kavi.llm.client import LLMClient, LLMError, LLMErrorKind
from kavi.llm.prompts import build_headers, render_advice_messages, render_build_messages
from kavi.proposals.model import Proposal
from kavi.redact import Redactor
from kavi.research.classifier import AttemptFailure, classify
from kavi.research.escalation import EscalationInput, Trigger, triggers_for
from kavi.routing.complexity import attempt_budget, score_complexity
from kavi.routing.posteriors import prior_params
from kavi.routing.task_type import task_type
from kavi.routing.thompson import choose_from_params
from kavi.verdicts import GATE_DIFFERENTIAL, GateResult

BUILD_OK = "BUILT"
BUILD_FAILED = "BUILD_FAILED"
VERIFIED = "VERIFIED"
VERIFY_FAILED = "VERIFY_FAILED"


class PromotionRefused(RuntimeError):
    """Promotion was asked for a build that may not be promoted; the message says why."""


class NotVerified(PromotionRefused):
    """The latest attempt did not pass verification: an expected verdict, not an error of the promotion step."""


class AlreadyTrusted(PromotionRefused):
    """The build asked for is already a trusted version: nothing to approve or promote."""

    def __init__(self, message: str, promotion: PromotionRow) -> None:
        super().__init__(message)
        self.promotion = promotion


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, indent=2, default=str).encode()


def _now() -> str:
    return datetime.now(UTC).isoformat()


# -- intake -----------------------------------------------------------------------------------------


def intake(ctx: ForgeContext, proposal: Proposal, source_path: str | None, actor: str = "kavi") -> bool:
    """Record a validated proposal with its complexity score; False when the identical spec is already in."""
    score = score_complexity(proposal)
    return ctx.records.register_proposal(proposal, source_path=source_path, complexity=score.score, actor=actor)


def proposal_task_type(ctx: ForgeContext, proposal: Proposal) -> str:
    return task_type(proposal.side_effect_class, score_complexity(proposal).score)


# -- packet -----------------------------------------------------------------------------------------


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
        "created_at": _now(),
    }
    if routing_as_of is not None:  # replaying the choice needs the outcomes up to this moment
        packet["routing_as_of"] = routing_as_of.isoformat()
    ref = ctx.store.put(_canonical(packet), "build_packet")
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


# -- build ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildOutcome:
    build_id: str
    attempt: int
    model: str | None
    ok: bool
    failure: AttemptFailure | None
    files: dict[str, str] = field(default_factory=dict)  # path -> sha256
    latency_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    recorded_model: bool = False
    log: list[str] = field(default_factory=list)
    build_log_sha256: str | None = None


def _failure_dict(f: AttemptFailure) -> dict[str, Any]:
    return {
        "stage": f.stage,
        "message": f.message,
        "llm_error_kind": f.llm_error_kind,
        "llm_terminal": f.llm_terminal,
        "violations": list(f.violations),
    }


def run_build(ctx: ForgeContext, name: str, run_id: str | None, build_id: str | None = None) -> BuildOutcome:
    """Ask the routed model for the files, check them against the allowlist, write the fresh sandbox."""
    with ctx.records.session():
        build = ctx.records.get_build(build_id) if build_id else None
        if build is None:
            build = ctx.records.build_for_run(name, run_id) if run_id else ctx.records.latest_build(name)
        row = ctx.records.get_proposal(name)
    if build is None:
        raise LedgerRecordError(f"no packet for {name!r}; materialize forge/build_packet first")
    packet = load_packet(ctx, build)
    client = ctx.llm_factory()
    redactor = Redactor.for_proposal(row.proposal if row else None, extra_secrets=[client.settings.api_key])
    log: list[str] = [f"{_now()} build {build.build_id} attempt {build.attempt_number} model {build.model}",
                      f"endpoint: {client.endpoint_label}"]
    failure: AttemptFailure | None = None
    files: dict[str, bytes] = {}
    completion = None
    answer_ref: ArtifactRef | None = None
    if row is not None:
        log += _prepare_verification(ctx, name, build, row)
    try:
        completion = client.complete(
            packet["messages"],
            model=str(build.model),
            json_mode=True,
            headers=build_headers(name, build.attempt_number, "build"),
        )
        log.append(f"model answered in {completion.latency_ms:.0f} ms "
                   f"({completion.prompt_tokens}+{completion.completion_tokens} tokens)"
                   + (" [recorded model replay]" if completion.recorded else ""))
        answer_ref = ctx.store.put(completion.text.encode(), "llm_answer")
        answer = parse_build_answer(completion.text)
        allow = check_allowlist(name, [(f.path, f.content) for f in answer.files])
        if not allow.ok:
            failure = AttemptFailure("allowlist", "the answer writes outside the allowlist",
                                     violations=allow.violations)
            log += [f"allowlist violation: {v}" for v in allow.violations]
        else:
            files = allow.files
    except LLMError as err:
        failure = AttemptFailure("llm", str(err), llm_error_kind=str(err.kind), llm_terminal=err.terminal)
        log.append(f"model call failed ({err.kind}): {err}")
        if err.kind in (LLMErrorKind.MODEL_NOT_FOUND, LLMErrorKind.AUTH):
            # Set aside until the configuration (endpoint or model list) changes; routing says so.
            ctx.records.set_model_aside(client.config_fingerprint, str(build.model), f"{err.kind}: {err}"[:300],
                                        build.build_id)
            log.append(f"model {build.model} set aside for this configuration ({err.kind})")
    except BadAnswerError as err:
        failure = AttemptFailure("answer", str(err))
        log.append(f"the answer is not usable: {err}")
    except OSError as err:
        if not is_infra_oserror(err):
            raise
        failure = AttemptFailure("infrastructure", describe_oserror(err))
        log.append(f"the forge could not store the answer: {failure.message}")

    file_refs: dict[str, ArtifactRef] = {}
    if failure is None:
        try:
            sandbox = create_sandbox(ctx.home.sandboxes_dir, build.build_id)
            write_files(sandbox / "work", files)
            log.append(f"wrote {len(files)} files to a fresh sandbox {sandbox.name}")
            for path, data in files.items():
                file_refs[path] = ctx.store.put(data, "skill_source" if path.startswith("skills/") else "skill_tests")
        except OSError as err:
            if not is_infra_oserror(err):
                raise
            # The forge's own writes failed (full disk, file-size limit): not the model's outcome.
            failure = AttemptFailure("infrastructure", describe_oserror(err))
            file_refs = {}
            shutil.rmtree(ctx.home.sandboxes_dir / build.build_id, ignore_errors=True)
            log.append(f"the forge's own writes failed: {failure.message}")
    if failure is not None:
        log.append("nothing reached the sandbox or the skills home")
    # What the endpoint or the answer parser said may quote a key or a holdout value: neither is stored.
    log = [redactor.message(line, 2000) for line in log]
    if failure is not None:
        failure = dataclasses.replace(failure, message=redactor.message(failure.message, 2000),
                                      violations=tuple(redactor.message(v) for v in failure.violations))

    log_doc = {
        "kind": "BUILD_LOG",
        "build_id": build.build_id,
        "proposal": name,
        "attempt": build.attempt_number,
        "model": build.model,
        "endpoint": client.endpoint_label,
        "recorded_model": bool(completion.recorded) if completion else client.settings.recorded,
        "files": {p: r.sha256 for p, r in file_refs.items()},
        "answer_sha256": answer_ref.sha256 if answer_ref else None,
        "failure": _failure_dict(failure) if failure else None,
        "log": log,
    }
    log_ref = ctx.store.put(_canonical(log_doc), "build_log")
    artifacts: list[tuple[str, ArtifactRef, str, str]] = [("build_log", log_ref, str(build.packet_sha256), "log_of")]
    if answer_ref is not None:
        artifacts.append(("llm_answer", answer_ref, str(build.packet_sha256), "answer_to"))
    for path, ref in file_refs.items():
        role = "skill" if path.startswith("skills/") else "tests"
        artifacts.append((role, ref, answer_ref.sha256 if answer_ref else str(build.packet_sha256), "file_of"))
    kind = classify(failure).kind.value if failure else None
    with ctx.records.session():  # the step's writes, together
        ctx.records.finish_build(
            build.build_id,
            status=BUILD_OK if failure is None else BUILD_FAILED,
            failure_kind=kind,
            artifacts=artifacts,
            prompt_tokens=completion.prompt_tokens if completion else None,
            completion_tokens=completion.completion_tokens if completion else None,
            latency_ms=completion.latency_ms if completion else None,
            cost_usd=completion.cost_usd if completion else None,
            skill_sha256=file_refs[skill_path(name)].sha256 if skill_path(name) in file_refs else None,
            test_sha256=file_refs[test_path(name)].sha256 if test_path(name) in file_refs else None,
        )
        if failure is None:
            ctx.records.set_status(name, ProposalStatus.BUILT, build_id=build.build_id,
                                   reason="files written to sandbox")
    return BuildOutcome(
        build.build_id, build.attempt_number, build.model, failure is None, failure,
        {p: r.sha256 for p, r in file_refs.items()},
        completion.latency_ms if completion else None,
        completion.prompt_tokens if completion else None,
        completion.completion_tokens if completion else None,
        bool(completion.recorded) if completion else client.settings.recorded,
        log, log_ref.sha256,
    )


# -- verify -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VerifyOutcome:
    build_id: str
    attempt: int
    ran: bool
    passed: bool
    results: list[GateResult]
    isolation: dict[str, str]
    duration_s: float
    report_sha256: str
    build_failure: AttemptFailure | None
    evidence: dict[str, Any] = field(default_factory=dict)
    ceremony: dict[str, Any] = field(default_factory=dict)  # the level, why, what it runs and what it skipped


def _mypy_cache_root(ctx: ForgeContext) -> Path:
    return ctx.home.root / "cache" / "mypy"


def _warm_mypy_cache(ctx: ForgeContext, build: BuildRow) -> list[str]:
    """A fresh home's mypy cache, filled in a background thread while the build waits for its model (the first
    verifications would otherwise build it one after another behind its lock); the gate does it itself otherwise."""
    cache_root = _mypy_cache_root(ctx)
    if mypy_cache_warm(cache_root):
        return []
    # Beside the cache, the forge's own folder: not a sandbox of any build (the build creates its own once its answer
    # is in, and a sandbox no build owns is a leak to `kavi doctor`).
    work = cache_root / f".warmup-{build.build_id}"
    limits = dataclasses.replace(GateConfig().limits, wall_s=ctx.settings.gate_wall_s, network=False)

    def warm() -> None:
        try:
            warm_mypy_cache(work, cache_root, limits)
        except Exception:  # an optimisation: the verification's own mypy run fills the cache then
            return
        finally:
            shutil.rmtree(work, ignore_errors=True)

    threading.Thread(target=warm, name="kavi-mypy-warmup", daemon=True).start()
    return ["mypy cache warm-up started alongside the build"]


def _prepare_verification(ctx: ForgeContext, name: str, build: BuildRow, row: ProposalRow) -> list[str]:
    """What the verification needs and does not depend on the build, started now, while the build waits for its
    model: the mypy cache of a fresh home, the generated inputs and the independent implementation (asked for beside
    the build's own request; the packet has routed the builder's model, which the independent one must not be). The
    evidence only where the verification will use it (the ceremony level). A failure to start any of it is a log
    line, never the build's failure: the verification then does it itself."""
    log: list[str] = []
    try:
        log += _warm_mypy_cache(ctx, build)
    except Exception as err:
        log.append(f"mypy cache warm-up not started ({type(err).__name__})")
    return log + _start_evidence(ctx, name, build, row)


def _start_evidence(ctx: ForgeContext, name: str, build: BuildRow, row: ProposalRow) -> list[str]:
    """At the ceremony levels that take the evidence: the independent implementation and the generated inputs."""
    try:
        with ctx.records.session():  # one connection for the reads it needs; the request itself is outside it
            runs, _ = evidence_decision(proposal_ceremony(ctx.records, name, row.proposal),
                                        ctx.settings.evidence_levels)
            started = runs and prefetch_independent(ctx, name, build.model, row.proposal, row.spec_sha256)
        # The generated inputs too: they depend on the proposal alone, and this process verifies the build next.
        prepared = runs and prepare_generated_inputs(row.proposal, ctx.settings.evidence_max_cases)
        return (["independent implementation requested alongside the build"] if started else []) + \
            (["generated inputs prepared alongside the build"] if prepared else [])
    except Exception as err:  # a prefetch is an optimisation; the verification asks without it
        return [f"independent implementation not requested ahead ({type(err).__name__}): the verification asks"]


def _build_failure_from_log(ctx: ForgeContext, build: BuildRow) -> AttemptFailure:
    roles = ctx.records.build_artifacts(build.build_id)
    if "build_log" in roles:
        doc = json.loads(ctx.store.get(roles["build_log"]))
        f = doc.get("failure") or {}
        return AttemptFailure(
            f.get("stage", "build"), f.get("message", "the build failed"), f.get("llm_error_kind"),
            bool(f.get("llm_terminal")), (), tuple(f.get("violations") or ()),
        )
    return AttemptFailure("build", f"build {build.build_id} has status {build.status} and no build log")


def verify(ctx: ForgeContext, name: str, run_id: str | None, build_id: str | None = None) -> VerifyOutcome:
    """Run every gate on the build's recorded bytes; write the verification report."""
    with ctx.records.session():
        build = ctx.records.get_build(build_id) if build_id else None
        if build is None:
            build = ctx.records.build_for_run(name, run_id) if run_id else ctx.records.latest_build(name)
        if build is None:
            raise LedgerRecordError(f"no build for {name!r}")
        proposal = ctx.records.require_proposal(name).proposal
        if build.status != BUILD_OK or not build.skill_sha256 or not build.test_sha256:
            failure = _build_failure_from_log(ctx, build)
            report = {"kind": "VERIFICATION_REPORT", "build_id": build.build_id, "ran": False, "passed": False,
                      "reason": f"not verified: the build failed at the {failure.stage} stage: {failure.message}",
                      "gates": []}
            ref = ctx.store.put(_canonical(report), "verification_report")
            ctx.records.finish_build(build.build_id, status=build.status, failure_kind=build.failure_kind,
                                     artifacts=[("report", ref, str(build.packet_sha256), "report_of")])
            not_built: VerifyOutcome | None = VerifyOutcome(build.build_id, build.attempt_number, False, False, [],
                                                            {}, 0.0, ref.sha256, failure)
        else:
            not_built, skill_sha256, test_sha256 = None, build.skill_sha256, build.test_sha256
        spec_sha256 = ctx.records.require_proposal(name).spec_sha256
    if not_built is not None:
        try:  # outside the session: it may wait for the answer
            settle_prefetch(ctx, name, build, proposal, spec_sha256)
        except OSError as err:
            if not is_infra_oserror(err):
                raise
        return not_built
    files = {
        skill_path(name): ctx.store.get(skill_sha256),
        test_path(name): ctx.store.get(test_sha256),
    }
    work_root = ctx.home.sandboxes_dir / build.build_id / "gates"
    # The evidence beyond the holdouts: at the configured ceremony levels, generated inputs and (when a second model
    # is configured) an independent implementation. Obtained here, outside the gates: a model error on the way is
    # the independent model's, recorded, and never fails this build.
    ceremony = proposal_ceremony(ctx.records, name, proposal)  # the score's level, or a person's recorded one
    runs, why = evidence_decision(ceremony, ctx.settings.evidence_levels)
    independent: IndependentOutcome | None = None
    if runs:
        try:
            independent = obtain_independent(ctx, name, build, proposal, spec_sha256)
        except OSError as err:
            if not is_infra_oserror(err):
                raise
            # The forge's own store failed (full disk...): the comparison is omitted, the build is judged without it.
            why_not = f"the forge could not store the independent answer: {describe_oserror(err)}"
            independent = IndependentOutcome(None, None, None, "omitted", why_not)
    evidence_config = EvidenceConfig(enabled=runs, skipped_reason="" if runs else why,
                                     max_cases=ctx.settings.evidence_max_cases,
                                     time_budget_s=ctx.settings.evidence_time_budget_s)
    config = GateConfig(
        wall_s=ctx.settings.gate_wall_s,
        coverage_min=ctx.settings.coverage_min,
        mypy_cache_root=_mypy_cache_root(ctx),
        policy_path=judging_policy_path(ctx.settings, ctx.home),
        evidence=evidence_config,
        slots=ctx.settings.gate_slots,
    )
    try:
        work_root.mkdir(parents=True, exist_ok=True)
        raw = run_gates(work_root, proposal, files, config,
                        independent=independent.source if independent is not None else None,
                        independent_label=independent.label if independent is not None else "")
    except OSError as err:
        if not is_infra_oserror(err):
            raise
        return _gates_not_run(ctx, name, build, AttemptFailure("infrastructure", describe_oserror(err)))
    # The one place gate output becomes stored and forwarded text (report, ledger, research note, next packet,
    # Dagster metadata): bounded, with configured keys, key-shaped strings and the holdout values redacted.
    outcome = dataclasses.replace(raw, results=Redactor.for_proposal(proposal).gate_results(raw.results))
    # The coach, after the deterministic gates (omitted when they failed, at ceremony low, or with no second model).
    coach = Redactor.for_proposal(proposal).gate_results(
        [coach_review(ctx, name, build, proposal, ceremony, files, outcome.results)])[0]
    outcome = dataclasses.replace(outcome, results=[*outcome.results, coach], passed=outcome.passed and coach.ok)
    evidence = evidence_section(ceremony, runs, why, independent, outcome.results)
    plan = ceremony_plan(ceremony)
    report = {
        "kind": "VERIFICATION_REPORT",
        "build_id": build.build_id,
        "proposal": name,
        "attempt": build.attempt_number,
        "ran": True,
        "passed": outcome.passed,
        "skill_sha256": build.skill_sha256,
        "test_sha256": build.test_sha256,
        "isolation": outcome.isolation,
        "duration_s": round(outcome.duration_s, 3),
        "gate_slot_wait_s": outcome.slot_wait_s,
        "gates": [r.to_dict() for r in outcome.results],
        "evidence": evidence,
        "ceremony": plan,
        "fingerprint": fingerprint_for(ctx).to_dict(),  # what judged it (issue 17: stale when it moves)
    }
    ref = ctx.store.put(_canonical(report), "verification_report")
    artifacts: list[tuple[str, ArtifactRef, str, str]] = [("report", ref, skill_sha256, "report_of")]
    if independent is not None and independent.sha256:
        # Lineage: spec → independent implementation → this verification report.
        artifacts.append(("independent_evidence", ref, independent.sha256, "evidence_for"))
    with ctx.records.session():  # gate results, report and status land together
        ctx.records.record_gate_results(build.build_id, outcome.results)
        ctx.records.finish_build(
            build.build_id,
            status=VERIFIED if outcome.passed else VERIFY_FAILED,
            failure_kind=None if outcome.passed else classify(
                AttemptFailure("verify", "gates failed", gate_results=outcome.results)).kind.value,
            artifacts=artifacts,
        )
        if outcome.passed:
            ctx.records.set_status(name, ProposalStatus.VERIFIED, build_id=build.build_id,
                                   reason="every gate passed")
        record_forge_verification(ctx, build_id=build.build_id, name=name, results=outcome.results,
                                  passed=outcome.passed, report_sha256=ref.sha256, duration_s=outcome.duration_s)
    gate_failure = None if outcome.passed else AttemptFailure("verify", "gates failed", gate_results=outcome.results)
    return VerifyOutcome(build.build_id, build.attempt_number, True, outcome.passed, outcome.results,
                         outcome.isolation, outcome.duration_s, ref.sha256, gate_failure, evidence, plan)


def evidence_section(ceremony: Ceremony, runs: bool, why: str, independent: IndependentOutcome | None,
                     results: list[GateResult]) -> dict[str, Any]:
    """The verification report's `evidence`: the ceremony level and why the generated-input evidence ran or not,
    the generated-input count, the agreement rate, the counterexamples, and the independent implementation
    (model, sha256, whether the gate used it and why not)."""
    gate = next((r for r in results if r.gate == GATE_DIFFERENTIAL), None)
    details = dict(gate.details) if gate is not None else {}
    found = details.get("independent")
    used: dict[str, Any] = dict(found) if isinstance(found, dict) else {}
    section: dict[str, Any] = {
        "ceremony": ceremony.to_dict(),
        "ran": runs and gate is not None and gate.verdict is not Verdict.OMITTED,
        "why": why if gate is None or gate.verdict is not Verdict.OMITTED else (gate.reason or why),
        "verdict": gate.verdict.value if gate is not None else None,
        "summary": gate.reason if gate is not None else "",
        "generated": details.get("generated", 0),
        "ran_cases": details.get("ran", 0),
        "compared": details.get("compared", 0),
        "agreed": details.get("agreed", 0),
        "agreement_rate": details.get("agreement_rate"),
        "outside_domain": details.get("outside_domain", 0),
        "counterexamples": list(details.get("counterexamples") or []),
        "independent": None,
    }
    if independent is not None:
        info = independent.to_dict()
        info["used"] = bool(used.get("used")) if independent.source is not None else False
        if independent.source is None:
            info["not_used_because"] = independent.reason
        elif not info["used"]:
            info["not_used_because"] = str(used.get("reason") or "the gate did not use it")
        section["independent"] = info
    elif runs:
        section["independent"] = {"used": False, "not_used_because": "not asked"}
    return section


def evidence_markdown(ev: dict[str, Any]) -> str:
    """The evidence section in a few lines, for the Dagster UI and the CLI."""
    ceremony = ev.get("ceremony") or {}
    lines = [f"- ceremony: {ceremony.get('level')} ({ceremony.get('reason', '')})"]
    if not ev.get("ran"):
        lines.append(f"- generated-input evidence not run: {ev.get('why', '')}")
        return "\n".join(lines)
    rate = ev.get("agreement_rate")
    lines.append(f"- {ev.get('generated', 0)} generated inputs, {ev.get('compared', 0)} compared, "
                 f"agreement {'n/a' if rate is None else f'{float(rate):.0%}'}: {ev.get('summary', '')}")
    ind = ev.get("independent") or {}
    if ind.get("used"):
        lines.append(f"- independent implementation by {ind.get('model')} (sha256 {str(ind.get('sha256'))[:16]})")
    else:
        lines.append(f"- no comparison: {ind.get('not_used_because', 'no independent implementation')}")
    for i, c in enumerate(ev.get("counterexamples") or [], 1):
        lines.append(f"- counterexample {i}: input {json.dumps(c.get('input'), default=str)[:300]} → candidate "
                     f"{json.dumps(c.get('candidate'), default=str)[:200]}, independent "
                     f"{json.dumps(c.get('independent'), default=str)[:200]}")
    return "\n".join(lines)


def _gates_not_run(ctx: ForgeContext, name: str, build: BuildRow, failure: AttemptFailure) -> VerifyOutcome:
    """The gates could not even start (the forge's own writes failed): recorded as infrastructure."""
    report = {"kind": "VERIFICATION_REPORT", "build_id": build.build_id, "proposal": name,
              "attempt": build.attempt_number, "ran": False, "passed": False,
              "reason": f"not verified: the forge could not set up the gates: {failure.message}", "gates": []}
    ref = ctx.store.put(_canonical(report), "verification_report")
    with ctx.records.session():
        ctx.records.finish_build(build.build_id, status=VERIFY_FAILED, failure_kind=classify(failure).kind.value,
                                 artifacts=[("report", ref, str(build.skill_sha256), "report_of")])
    return VerifyOutcome(build.build_id, build.attempt_number, False, False, [], {}, 0.0, ref.sha256, failure)


# -- research ---------------------------------------------------------------------------------------


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
    # No endpoint for this proposal (the recorded model without a recording): the person's configuration, not the
    # model and not a failure to review. Like infrastructure it costs the model nothing; it escalates nothing.
    unconfigured = cls.kind is FailureKind.LLM_NOT_CONFIGURED
    not_model = infra or unconfigured
    # Infrastructure failures are not the model's: they spend none of its attempt budget and are not compared
    # with its failures for a stuck loop (their own repeats are, so a broken tool escalates instead of looping).
    model_previous = [n for n in previous if n["failure_kind"] not in NOT_THE_MODELS]
    same_side = [n for n in previous if (n["failure_kind"] == FailureKind.INFRASTRUCTURE.value) == infra]
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
                 else "waits for a person: kavi retry NAME --by WHO [--hint TEXT]" if escalated
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
    ref = ctx.store.put(_canonical(note), "research_note")
    reason = f"{cls.kind.value}" + (f"; escalated: {', '.join(triggers)}" if triggers else "")
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
    gate = next((r for r in results if r.gate == GATE_DIFFERENTIAL and not r.ok), None)
    found = gate.details.get("counterexamples") if gate is not None else None
    return [dict(c) for c in found if isinstance(c, dict)] if isinstance(found, list) else []


NOT_THE_MODELS = (FailureKind.INFRASTRUCTURE.value, FailureKind.LLM_NOT_CONFIGURED.value)


def record_outcome(ctx: ForgeContext, name: str, build: BuildRow, *, success: bool, failure_kind: str | None) -> None:
    if not build.model:
        return
    _record_outcome(ctx, build, ctx.records.require_proposal(name), success=success, failure_kind=failure_kind)


def _record_outcome(ctx: ForgeContext, build: BuildRow, row: ProposalRow, *, success: bool,
                    failure_kind: str | None) -> None:
    if not build.model:
        return
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


# -- promotion --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromotionOutcome:
    promoted: bool
    reason: str
    build_id: str | None = None
    source_sha256: str | None = None
    approved_by: str | None = None
    skill_path: str | None = None
    promotion_seq: int | None = None
    version: int | None = None


@dataclass(frozen=True)
class ApprovalOutcome:
    """An approval asked for: recorded, or not because the build already had one (`first`, who came first)."""

    build: BuildRow
    recorded: bool
    first: dict[str, Any] | None
    class_change: tuple[str, str] | None  # (trusted class, candidate class) when the candidate changes it


def _atomic_copy(data: bytes, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, 0o444)
    os.replace(tmp, target)


def promotable_build(ctx: ForgeContext, name: str) -> BuildRow:
    """The latest attempt, if it may be promoted; otherwise PromotionRefused says why (AlreadyTrusted when it is
    a trusted version already)."""
    row = ctx.records.require_proposal(name)
    build = ctx.records.latest_build(name)
    if build is None:
        raise PromotionRefused(f"{name} has no build; forge it first (kavi forge {name})")
    done = ctx.records.promotion_for_build(build.build_id)
    if done is not None:
        raise AlreadyTrusted(
            f"{name}@{done.version} is already trusted (build {build.build_id}, approved by {done.approved_by}, "
            f"promotion #{done.seq})", done)
    if build.status != VERIFIED:
        raise NotVerified(
            f"{name}: the latest attempt ({build.build_id}, attempt {build.attempt_number}) did not pass "
            f"verification (status {build.status}{', ' + build.failure_kind if build.failure_kind else ''})"
        )
    if build.spec_revision is not None and build.spec_revision != row.revision:
        raise PromotionRefused(
            f"{name}: the latest attempt ({build.build_id}) was built from revision {build.spec_revision} of the "
            f"proposal, and revision {row.revision} is current; forge it first (kavi forge {name})")
    results = ctx.records.gate_results(build.build_id)
    failing = [r["gate"] for r in results if r["effective_verdict"] == "failed"]
    if not results or failing:
        raise NotVerified(f"{name}: the verification report of {build.build_id} is not passing "
                               f"({', '.join(failing) or 'no gate results'})")
    if not build.skill_sha256:
        raise PromotionRefused(f"{name}: build {build.build_id} has no recorded skill source")
    return build


def class_change(ctx: ForgeContext, name: str) -> tuple[str, str] | None:
    """(trusted class, proposed class) when the current revision changes the latest trusted version's class."""
    current = ctx.records.trusted(name)
    proposed = ctx.records.require_proposal(name).proposal.side_effect_class
    if current and current[0].side_effect_class != proposed:
        return current[0].side_effect_class.value, proposed.value
    return None


def approve(ctx: ForgeContext, name: str, approved_by: str) -> ApprovalOutcome:
    """Record a person's approval of NAME's latest verified attempt. AlreadyTrusted when that attempt is a trusted
    version already (nothing is recorded); when someone approved it first, their approval stands and this one is
    not recorded (`recorded` is False, `first` says who)."""
    if not approved_by.strip():
        raise PromotionRefused("an approval needs a name: --by WHO")
    with ctx.records.session():  # the check and the record in one transaction: concurrent approvers serialise here
        build = promotable_build(ctx, name)
        first = ctx.records.record_approval(name, build.build_id, approved_by.strip())
        change = class_change(ctx, name)
    return ApprovalOutcome(build, first is None, first, change)


def promote(ctx: ForgeContext, name: str) -> PromotionOutcome:
    """Promote the latest verified attempt as the skill's next version when it has an approval (or an auto-approve
    policy covers it). The versions already trusted keep serving whatever this attempt's fate."""
    # The registry file, a projection of every trusted skill, is not rewritten here: that made each promotion pay
    # for the size of the registry. The `forge/skill_registry` asset regenerates it; the `refresh_registry` sensor
    # materializes that asset when the ledger's promotions moved (one rewrite for a burst of them), and the CLI
    # commands that promote refresh it when they finish.
    with ctx.records.session():  # one connection and one transaction for the whole step
        return _promote(ctx, name)


def _promote(ctx: ForgeContext, name: str) -> PromotionOutcome:
    row = ctx.records.require_proposal(name)
    latest = ctx.records.latest_build(name)
    done = ctx.records.promotion_for_build(latest.build_id) if latest is not None else None
    if done is not None:
        return PromotionOutcome(False, f"already trusted as {name}@{done.version}", done.build_id, done.source_sha256,
                                done.approved_by, done.skill_path, done.seq, done.version)
    build = promotable_build(ctx, name)
    version = ctx.records.next_version(name)
    change = class_change(ctx, name)
    approval = ctx.records.approval_for(name, build.build_id)
    if approval is not None and change is not None and approval.get("policy") == "auto_approve":
        approval = None  # a policy never approves across a class change
    if proposal_ceremony(ctx.records, name, row.proposal).level is CeremonyLevel.STRICT and (
            approval is None or approval.get("policy") is not None):
        # Strict ceremony: a person's approval, recorded before promotion; an auto-approve policy never covers it.
        return PromotionOutcome(
            False, f"awaiting a person's approval: {name} is at ceremony level strict (auto-approve never covers "
            f"it): kavi approve {name} --by WHO", build.build_id)
    if approval is None:
        if change is not None:
            return PromotionOutcome(
                False, f"awaiting a person's approval: {name}@{version} changes the side-effect class "
                f"{change[0]} → {change[1]} (auto-approve never covers a class change): kavi approve {name} --by WHO",
                build.build_id)
        if row.proposal.side_effect_class in ctx.settings.auto_approve:
            who = f"auto-approve policy ({row.proposal.side_effect_class.value})"
            approval = ctx.records.record_approval(name, build.build_id, who, policy="auto_approve") or {
                "approved_by": who}
        else:
            return PromotionOutcome(False, f"awaiting approval: kavi approve {name} --by WHO", build.build_id)
    source = ctx.store.get(str(build.skill_sha256))
    tests = ctx.store.get(str(build.test_sha256)) if build.test_sha256 else None
    # Each version has its own file, named after it: promoting version N never touches the files of the others.
    target = ctx.home.skill_version_file(name, version)
    from kavi.runtime.composition import parse_doc

    if parse_doc(source) is not None:  # a decomposed parent's trusted artifact is its composition (JSON), not code
        target = target.with_suffix(".composition.json")
    _atomic_copy(source, target)
    if sha256_bytes(target.read_bytes()) != build.skill_sha256:
        raise PromotionRefused(f"{name}: the copy in the skills home does not match the verified hash")
    if tests is not None:
        _atomic_copy(tests, ctx.home.skill_version_test_file(name, version))
    promo = ctx.records.record_promotion(
        name=name, build_id=build.build_id, from_status=row.status, approved_by=str(approval["approved_by"]),
        source_sha256=str(build.skill_sha256), test_sha256=build.test_sha256,
        skill_path=str(target.relative_to(ctx.home.root)), version=version,
    )
    attest_promotion(ctx, promo)  # signed provenance, in the promotion's transaction
    return PromotionOutcome(True, f"promoted as {name}@{promo.version}", build.build_id, build.skill_sha256,
                            promo.approved_by, promo.skill_path, promo.seq, promo.version)


def cleanup_sandbox(ctx: ForgeContext, build_id: str) -> None:
    shutil.rmtree(ctx.home.sandboxes_dir / build_id, ignore_errors=True)
