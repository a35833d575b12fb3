"""The verify step: every gate on a build's recorded bytes, the verification report and its evidence section, and
what the verification starts ahead while the build waits for its model."""

import dataclasses
import json
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kavi.build.allowlist import skill_path, test_path
from kavi.build.sandbox_dir import create_sandbox
from kavi.forge.attempt import BUILD_OK, VERIFIED, VERIFY_FAILED, canonical
from kavi.forge.ceremony import Ceremony, ceremony_plan, evidence_decision
from kavi.forge.coach import review as coach_review
from kavi.forge.context import ForgeContext, adequacy_config
from kavi.forge.fingerprint import judging_policy_path
from kavi.forge.independent import IndependentOutcome, obtain_independent, prefetch_independent, settle_prefetch
from kavi.forge.levels import proposal_ceremony
from kavi.forge.reverify import fingerprint_for, record_forge_verification
from kavi.gates.differential import EvidenceConfig
from kavi.gates.resource import ResourceConfig
from kavi.gates.runner import (
    GateConfig,
    can_hold_gate_jobs,
    hold_gate_jobs,
    prepare_generated_inputs,
    release_gate_jobs,
    run_gates,
)
from kavi.gates.tools import mypy_cache_warm, warm_mypy_cache
from kavi.infrastructure import describe_oserror, is_infra_oserror
from kavi.ledger.artifacts import ArtifactRef
from kavi.ledger.records import BuildRow, LedgerRecordError, ProposalRow
from kavi.lifecycle import ProposalStatus, Verdict
from kavi.redact import Redactor
from kavi.research.classifier import AttemptFailure, classify
from kavi.verdicts import GATE_ADEQUACY, GATE_DIFFERENTIAL, GateResult


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


def runtime_containment() -> str:
    """How trusted skills run here: in a sandboxed worker, or, where none can be built, refused or run with the layers
    that remain (the setting decides)."""
    from kavi.sandbox.jail import probe
    from kavi.settings import read_setting

    problem = probe()
    if problem is None:
        return "contained: each run in a sandboxed worker (the gate sandbox's layers), killed at its deadline"
    if read_setting("run_without_sandbox") == "allow":
        return f"uncontained: no worker sandbox here ({problem}); runs use the layers that remain (setting: allow)"
    return f"refused: no worker sandbox here ({problem}); trusted runs are refused until one can be built"


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


def prepare_verification(ctx: ForgeContext, name: str, build: BuildRow, row: ProposalRow) -> list[str]:
    """Start what the verification needs but the build does not (the mypy cache, generated inputs, the
    independent implementation) while the build waits for its model; a failure here is a log line, never the build's."""
    log: list[str] = []
    try:
        log += _warm_mypy_cache(ctx, build)
    except Exception as err:
        log.append(f"mypy cache warm-up not started ({type(err).__name__})")
    return log + _start_evidence(ctx, name, build, row)


def _gate_config(ctx: ForgeContext) -> GateConfig:
    """What the held jobs and the verification's own jobs are built from (the verification adds the rest)."""
    return GateConfig(wall_s=ctx.settings.gate_wall_s, mypy_cache_root=_mypy_cache_root(ctx))


def gates_root(ctx: ForgeContext, build_id: str) -> Path:
    """Where a build's gates run: its sandbox's `gates` folder."""
    return ctx.home.sandboxes_dir / build_id / "gates"


def hold_gates(ctx: ForgeContext, name: str, build: BuildRow) -> tuple[Path | None, list[str]]:
    """The build's pytest and mypy jobs started ahead, in its sandbox folder (made now, so the build writes its files
    there), while it waits for its model (kavi.gates.runner.hold_gate_jobs): (that folder, or None when nothing could
    be held here; log lines). A failure here is a log line, never the build's."""
    if not can_hold_gate_jobs():
        return None, []
    try:
        sandbox = create_sandbox(ctx.home.sandboxes_dir, build.build_id)
    except Exception as err:  # the build makes it itself, and says what is wrong
        return None, [f"gate jobs not started ahead ({type(err).__name__}): the verification starts them"]
    try:
        started = hold_gate_jobs(gates_root(ctx, build.build_id), name, _gate_config(ctx))
    except Exception as err:
        release_gate_jobs(sandbox)
        shutil.rmtree(sandbox, ignore_errors=True)
        return None, [f"gate jobs not started ahead ({type(err).__name__}): the verification starts them"]
    return sandbox, [f"gate jobs started ahead of the answer: {', '.join(started)}"] if started else []


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
            bool(f.get("llm_terminal")), (), tuple(f.get("violations") or ()), llm_status=f.get("llm_status"),
            endpoint=doc.get("endpoint"),
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
            ref = ctx.store.put(canonical(report), "verification_report")
            ctx.records.finish_build(build.build_id, status=build.status, failure_kind=build.failure_kind,
                                     artifacts=[("report", ref, str(build.packet_sha256), "report_of")])
            not_built: VerifyOutcome | None = VerifyOutcome(build.build_id, build.attempt_number, False, False, [],
                                                            {}, 0.0, ref.sha256, failure)
        else:
            not_built, skill_sha256, test_sha256 = None, build.skill_sha256, build.test_sha256
            # The level the evidence is decided at: the score's, or a person's recorded one.
            ceremony = proposal_ceremony(ctx.records, name, proposal)
        spec_sha256 = ctx.records.require_proposal(name).spec_sha256
    if not_built is not None:
        release_gate_jobs(gates_root(ctx, build.build_id))
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
    work_root = gates_root(ctx, build.build_id)
    # The evidence beyond the holdouts: at the configured ceremony levels, generated inputs and (when a second model
    # is configured) an independent implementation. Obtained here, outside the gates: a model error on the way is
    # the independent model's, recorded, and never fails this build.
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
    config = dataclasses.replace(
        _gate_config(ctx),
        coverage_min=ctx.settings.coverage_min,
        policy_path=judging_policy_path(ctx.settings, ctx.home),
        evidence=evidence_config,
        resource=ResourceConfig(ctx.settings.resource_deadline_s, ctx.settings.resource_budget_s),
        adequacy=adequacy_config(ctx.settings, runs, why),
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
        ctx.home.release_reserve()  # the room set aside lets the attempt still be closed and recorded
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
        "adequacy": adequacy_section(outcome.results),
        "ceremony": plan,
        "fingerprint": fingerprint_for(ctx).to_dict(),  # what judged it (stale when it moves)
        "runtime": runtime_containment(),  # how the skill will run once trusted, on this machine
    }
    ref = ctx.store.put(canonical(report), "verification_report")
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


def adequacy_section(results: list[GateResult]) -> dict[str, Any]:
    """The verification report's `adequacy`: the mutants tried, killed (and by what), surviving and equivalent, the
    questions the evidence leaves open, and why the analysis did not run when it did not."""
    gate = next((r for r in results if r.gate == GATE_ADEQUACY), None)
    if gate is None:
        return {"ran": False, "why": "not run"}
    return {"ran": gate.verdict is not Verdict.OMITTED, "verdict": gate.verdict.value, "summary": gate.reason,
            **gate.details}


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
    ref = ctx.store.put(canonical(report), "verification_report")
    with ctx.records.session():
        ctx.records.finish_build(build.build_id, status=VERIFY_FAILED, failure_kind=classify(failure).kind.value,
                                 artifacts=[("report", ref, str(build.skill_sha256), "report_of")])
    return VerifyOutcome(build.build_id, build.attempt_number, False, False, [], {}, 0.0, ref.sha256, failure)
