"""Promotion of a verified build: the checks that it may be trusted, a person's approval, the copy into the skills
home and the promotion record."""

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kavi.forge.attempt import VERIFIED
from kavi.forge.ceremony import CeremonyLevel
from kavi.forge.context import ForgeContext
from kavi.forge.levels import proposal_ceremony
from kavi.forge.provenance import attest_promotion
from kavi.forge.questions import open_questions
from kavi.forge.surfaces import widened_surface
from kavi.ledger.artifacts import sha256_bytes
from kavi.ledger.records import BuildRow, PromotionRow


class PromotionRefused(RuntimeError):
    """Promotion was asked for a build that may not be promoted; the message says why."""


class NotVerified(PromotionRefused):
    """The latest attempt did not pass verification: an expected verdict, not an error of the promotion step."""


class AlreadyTrusted(PromotionRefused):
    """The build asked for is already a trusted version: nothing to approve or promote."""

    def __init__(self, message: str, promotion: PromotionRow) -> None:
        super().__init__(message)
        self.promotion = promotion


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
    widening: tuple[str, ...] = ()  # what the candidate reaches that the trusted version did not (surface.py)


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
        wider = widened_surface(ctx, name, build)
    return ApprovalOutcome(build, first is None, first, change, tuple(wider))


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
    wider = widened_surface(ctx, name, build)
    approval = ctx.records.approval_for(name, build.build_id)
    if approval is not None and (change is not None or wider) and approval.get("policy") == "auto_approve":
        approval = None  # a policy never approves across a class change, nor a wider surface
    level = proposal_ceremony(ctx.records, name, row.proposal).level
    asked = open_questions(ctx, name)  # what the evidence leaves open about this build (the adequacy gate's)
    if asked and level is CeremonyLevel.STRICT:
        return PromotionOutcome(
            False, f"blocked: {len(asked)} open question(s) the evidence leaves open, and {name} is at ceremony level "
            f"strict (each must be answered): kavi questions {name}, then kavi answer {name} N --expected JSON --by "
            "WHO", build.build_id)
    if asked and level is CeremonyLevel.STANDARD and (approval is None or approval.get("policy") is not None):
        return PromotionOutcome(
            False, f"awaiting a person: {len(asked)} open question(s) the evidence leaves open withhold auto-approval "
            f"(kavi questions {name}); answer them (kavi answer {name} N ...) or approve anyway: kavi approve {name} "
            "--by WHO", build.build_id)
    if level is CeremonyLevel.STRICT and (approval is None or approval.get("policy") is not None):
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
        if wider:
            return PromotionOutcome(
                False, f"awaiting a person's approval: {name}@{version} reaches more than the trusted version "
                f"({'; '.join(wider)}); auto-approve never covers a wider surface: kavi diff {name}, then "
                f"kavi approve {name} --by WHO", build.build_id)
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
    anyway = f" (approved by {promo.approved_by} with {len(asked)} open question(s))" if asked else ""
    return PromotionOutcome(True, f"promoted as {name}@{promo.version}{anyway}", build.build_id, build.skill_sha256,
                            promo.approved_by, promo.skill_path, promo.seq, promo.version)
