"""Re-verification: the gates re-run on trusted versions' recorded bytes under today's judges; a version that now
fails is SUSPECT until a person reinstates it (a later passing re-run does not overturn the finding)."""

import contextlib
import json
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kavi.build.allowlist import skill_path, test_path
from kavi.forge.ceremony import ceremony_for, evidence_decision
from kavi.forge.context import ForgeContext, adequacy_config
from kavi.forge.fingerprint import Fingerprint, current_fingerprint, judging_policy_path
from kavi.gates.composition import children_gate, composition_acceptance
from kavi.gates.differential import EvidenceConfig
from kavi.gates.resource import ResourceConfig
from kavi.gates.runner import GateConfig, run_gates
from kavi.infrastructure import infrastructure_cause
from kavi.ledger.records import TrustedRecord
from kavi.ledger.verification_records import VerificationRecords, VerificationRow, VersionEvent
from kavi.ledger.version_records import VERSION_TRUSTED
from kavi.policy.policy import load_policy
from kavi.proposals.model import Proposal, parse_proposal
from kavi.redact import Redactor
from kavi.runtime.executor import COMPOSITION_SUFFIX
from kavi.sandbox.runner import Limits
from kavi.verdicts import GATE_COVERAGE, GATE_PYTEST, GateResult

FORGE = "forge"
REVERIFY = "reverify"


@dataclass(frozen=True)
class StaleVersion:
    """A trusted version whose latest verification was judged by a different fingerprint (or by none recorded)."""

    ref: str
    name: str
    version: int
    verified_under: str | None
    changes: list[str]


@dataclass(frozen=True)
class ReverifyResult:
    ref: str
    name: str
    version: int
    ran: bool
    passed: bool
    failing: list[dict[str, str]]
    fingerprint: str
    previous: dict[str, Any] | None
    report_sha256: str | None
    duration_s: float
    marked_suspect: bool
    note: str = ""
    gates: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "ran": self.ran, "passed": self.passed, "failing": self.failing,
                "fingerprint": self.fingerprint, "previous": self.previous, "report_sha256": self.report_sha256,
                "duration_s": round(self.duration_s, 3), "marked_suspect": self.marked_suspect, "note": self.note}


def failing_gates(results: list[GateResult]) -> list[dict[str, str]]:
    return [{"gate": r.gate, "reason": r.reason[:300]} for r in results if not r.ok]


def verification_records(ctx: ForgeContext) -> VerificationRecords:
    return VerificationRecords(ctx.records.ledger)


def fingerprint_for(ctx: ForgeContext) -> Fingerprint:
    return current_fingerprint(ctx.settings, ctx.home)


def record_forge_verification(ctx: ForgeContext, *, build_id: str, name: str, results: list[GateResult],
                              passed: bool, report_sha256: str, duration_s: float) -> dict[str, Any]:
    """Record the fingerprint that judged a forge verification (called by the verify step); returns it for the
    report. Inside the caller's session when there is one."""
    fp = fingerprint_for(ctx)
    g = verification_records(ctx)
    g.record_fingerprint(fp.digest, fp.parts)
    g.record_verification(build_id=build_id, name=name, version=None, kind=FORGE, fingerprint=fp.digest,
                          passed=passed, failing=failing_gates(results), report_sha256=report_sha256,
                          duration_s=duration_s, actor="kavi forge")
    return fp.to_dict()


def record_model_call(ctx: ForgeContext, purpose: str, name: str, build_id: str | None, model: str,
                      completion: Any) -> None:
    """Record a model call that is neither a build nor an independent implementation (research advice), so the
    skill's forge cost counts it; `completion` None: the call failed (its tokens are unknown, its attempt counted)."""
    verification_records(ctx).record_model_call(
        purpose=purpose, name=name, build_id=build_id, model=getattr(completion, "model", None) or model,
        prompt_tokens=getattr(completion, "prompt_tokens", None),
        completion_tokens=getattr(completion, "completion_tokens", None),
        latency_ms=getattr(completion, "latency_ms", None), ok=completion is not None)


def stale_versions(ctx: ForgeContext, fp: Fingerprint | None = None,
                   trusted: list[TrustedRecord] | None = None) -> list[StaleVersion]:
    """Trusted versions not verified under `fp` (today's fingerprint by default): their verdict is stale."""
    fp = fp or fingerprint_for(ctx)
    trusted = ctx.records.trusted_versions() if trusted is None else trusted
    g = verification_records(ctx)
    with ctx.records.session():
        latest = g.latest_verification_of_builds([t.build_id for t in trusted])
        parts_cache: dict[str, dict[str, Any] | None] = {}
        out: list[StaleVersion] = []
        for t in trusted:
            v = latest.get(t.build_id)
            if v is not None and v.fingerprint == fp.digest:
                continue
            if v is None:
                out.append(StaleVersion(t.ref, t.name, t.version, None, ["never verified with a recorded fingerprint "
                                                                         "(promoted before fingerprints existed)"]))
                continue
            if v.fingerprint not in parts_cache:
                parts_cache[v.fingerprint] = g.fingerprint_parts(v.fingerprint)
            changes = fp.changes_from(parts_cache[v.fingerprint])
            out.append(StaleVersion(t.ref, t.name, t.version, v.fingerprint, changes))
    return out


def moved_versions(ctx: ForgeContext, fp: Fingerprint | None = None) -> list[StaleVersion]:
    """The stale versions verified under a recorded fingerprint other than today's (not those that predate
    fingerprints)."""
    return [s for s in stale_versions(ctx, fp) if s.verified_under is not None]


def _spec_of(ctx: ForgeContext, t: TrustedRecord) -> Proposal:
    """The spec revision the version was built from (its examples and holdouts judge it), else the current spec."""
    with ctx.records.ledger.connect() as con:
        row = con.execute("SELECT spec_json FROM proposal_revisions WHERE name = ? AND revision = ? LIMIT 1",
                          [t.name, t.spec_revision or 1]).fetchone()
    if row is None:
        return ctx.records.require_proposal(t.name).proposal
    return parse_proposal(json.loads(row[0]), recorded=True)


@dataclass(frozen=True)
class _Judged:
    """What today's judges said of a version: the gate results, the isolation they ran with, and what the report
    adds about how it was judged."""

    results: list[GateResult]
    passed: bool
    isolation: dict[str, Any]
    report: dict[str, Any]


def reverify_version(ctx: ForgeContext, t: TrustedRecord, *, actor: str = "kavi reverify",
                     fp: Fingerprint | None = None) -> ReverifyResult:
    """Re-run every gate on the version's recorded bytes (the artifacts its promotion hashed), under today's
    fingerprint; a decomposed parent's composition is judged again as it was forged (its children still served,
    the parent's examples and holdouts through the chain). Records the verdict beside the earlier ones; a failure
    marks the version SUSPECT."""
    fp = fp or fingerprint_for(ctx)
    g = verification_records(ctx)
    previous_row = g.latest_verification_of_builds([t.build_id]).get(t.build_id)
    previous = None if previous_row is None else {
        "fingerprint": previous_row.fingerprint, "passed": previous_row.passed, "kind": previous_row.kind,
        "at": previous_row.created_at}
    composition = t.skill_path.endswith(COMPOSITION_SUFFIX)
    if not composition and not t.test_sha256:
        return ReverifyResult(t.ref, t.name, t.version, False, False, [], fp.digest, previous, None, 0.0, False,
                              "not re-verified: no test file was recorded with this version")
    proposal = _spec_of(ctx, t)
    t0 = time.monotonic()
    judged = _judge_composition(ctx, t, proposal) if composition else _judge_gates(ctx, t, proposal)
    duration = time.monotonic() - t0
    results = Redactor.for_proposal(proposal).gate_results(judged.results)
    failing = failing_gates(results)
    # A gate the forge could not run (a missing tool, a full disk) says nothing about the skill: no SUSPECT for it.
    infra = {r.gate: cause for r in results if not r.ok and (cause := infrastructure_cause(r)) is not None}
    verdict_against = [f for f in failing if f["gate"] not in infra
                       and not (f["gate"] == GATE_COVERAGE and GATE_PYTEST in infra)]  # no tests ran: no coverage
    report = {"kind": "VERIFICATION_REPORT", "reverify": True, "build_id": t.build_id, "proposal": t.name,
              "version": t.version, "ran": True, "passed": judged.passed, "skill_sha256": t.source_sha256,
              "test_sha256": t.test_sha256, "isolation": judged.isolation, "duration_s": round(duration, 3),
              "fingerprint": fp.to_dict(), "previous": previous, "gates": [r.to_dict() for r in results],
              **judged.report}
    ref = ctx.store.put(json.dumps(report, sort_keys=True, indent=2, default=str).encode(), "verification_report")
    suspect = False
    with ctx.records.session():
        ctx.records.record_artifact(ref)
        g.record_fingerprint(fp.digest, fp.parts)
        g.record_verification(build_id=t.build_id, name=t.name, version=t.version, kind=REVERIFY,
                              fingerprint=fp.digest, passed=judged.passed, failing=failing,
                              report_sha256=ref.sha256, duration_s=duration, actor=actor)
        if verdict_against:
            earlier = g.fingerprint_parts(previous_row.fingerprint) if previous_row else None
            moved = "; ".join(fp.changes_from(earlier))
            first = verdict_against[0]
            reason = (f"re-verification failed at gate {first['gate']}: {first['reason']} "
                      f"(judged under fingerprint {fp.digest[:12]}: {moved}; report {ref.sha256[:12]})")
            suspect = g.mark_suspect(t.name, t.version, reason=reason, actor=actor)
    note = ("" if not infra else "the forge could not run gate(s) " + ", ".join(
        f"{g} ({c[:120]})" for g, c in sorted(infra.items())) + ": not a verdict on the skill; fix the machine and "
            "re-run")
    return ReverifyResult(t.ref, t.name, t.version, True, judged.passed, failing, fp.digest, previous, ref.sha256,
                          duration, suspect, note, gates=[r.to_dict() for r in results])


@contextlib.contextmanager
def _scratch(ctx: ForgeContext, t: TrustedRecord) -> Iterator[Path]:
    """A fresh directory under the home's sandboxes for one re-verification, removed afterwards."""
    work_root = ctx.home.sandboxes_dir / f"reverify-{t.name}-v{t.version}-{uuid.uuid4().hex[:8]}"
    try:
        work_root.mkdir(parents=True)
        yield work_root
    finally:
        shutil.rmtree(work_root, ignore_errors=True)


def _judge_gates(ctx: ForgeContext, t: TrustedRecord, proposal: Proposal) -> _Judged:
    """Every gate on the version's skill and test bytes, as the forge ran them (no independent implementation:
    re-verification makes no model call)."""
    assert t.test_sha256
    files = {skill_path(t.name): ctx.store.get(t.source_sha256), test_path(t.name): ctx.store.get(t.test_sha256)}
    ceremony = ceremony_for(proposal)
    runs, why = evidence_decision(ceremony, ctx.settings.evidence_levels)
    config = GateConfig(
        wall_s=ctx.settings.gate_wall_s, coverage_min=ctx.settings.coverage_min,
        mypy_cache_root=ctx.home.root / "cache" / "mypy", policy_path=judging_policy_path(ctx.settings, ctx.home),
        evidence=EvidenceConfig(enabled=runs, skipped_reason="" if runs else why,
                                max_cases=ctx.settings.evidence_max_cases,
                                time_budget_s=ctx.settings.evidence_time_budget_s),
        resource=ResourceConfig(ctx.settings.resource_deadline_s, ctx.settings.resource_budget_s),
        adequacy=adequacy_config(ctx.settings, runs, why),
        slots=ctx.settings.gate_slots)
    with _scratch(ctx, t) as work_root:
        raw = run_gates(work_root, proposal, files, config)
    return _Judged(raw.results, raw.passed, raw.isolation, {})


def _judge_composition(ctx: ForgeContext, t: TrustedRecord, proposal: Proposal) -> _Judged:
    """A composition as it was forged: each child it pins must still be a served trusted version (a SUSPECT or
    revoked child is a failed `children` gate), and the parent's examples and holdouts, run through the chain on the
    pinned children's bytes in a fresh gate sandbox, must pass acceptance."""
    doc = json.loads(ctx.store.get(t.source_sha256))
    pins: dict[str, dict[str, Any]] = dict(doc.get("children") or {})
    not_served = []
    for child, pin in pins.items():
        status, _reason = ctx.records.version_status(child, int(pin.get("version") or 0))
        if status != VERSION_TRUSTED:
            not_served.append(f"{child}@{pin.get('version')} is {status or 'not a promoted version'}")
    children = children_gate(pins, not_served)
    child_bytes = {child: ctx.store.get(str(pin.get("sha256"))) for child, pin in pins.items()}
    with _scratch(ctx, t) as work_root:
        (work_root / "composition").mkdir()
        acceptance = composition_acceptance(work_root / "composition", proposal, doc, child_bytes,
                                            Limits(wall_s=ctx.settings.gate_wall_s))
    return _Judged([children, acceptance], children.ok and acceptance.ok, {},
                   {"through": "composition", "composition_sha256": t.source_sha256})


def reverify(ctx: ForgeContext, names: list[str] | None = None, *, only_stale: bool = False,
             actor: str = "kavi reverify") -> list[ReverifyResult]:
    """Re-verify every trusted version (of `names`), or only the stale ones. Sequential: each run's gates already
    run concurrently, and the machine's cores are the limit."""
    fp = fingerprint_for(ctx)
    # An unusable policy file would fail every version's policy gate: refused here (PolicyError), never SUSPECT.
    load_policy(judging_policy_path(ctx.settings, ctx.home))
    trusted = [t for t in ctx.records.trusted_versions() if names is None or t.name in names]
    if only_stale:
        stale = {s.ref for s in stale_versions(ctx, fp, trusted)}
        trusted = [t for t in trusted if t.ref in stale]
    return [reverify_version(ctx, t, actor=actor, fp=fp) for t in trusted]


def suspects(ctx: ForgeContext) -> list[VersionEvent]:
    return verification_records(ctx).suspects()


def history(ctx: ForgeContext, name: str) -> list[VerificationRow]:
    return verification_records(ctx).verifications(name)
