"""Promotion: only the latest attempt, only from a passing report, only with an approval (or explicit policy)."""

from typing import Any

import pytest

from kavi.forge.context import ForgeContext, ForgeSettings
from kavi.forge.promote import PromotionRefused, approve, promote
from kavi.home import KaviHome
from kavi.ledger.artifacts import sha256_bytes
from kavi.lifecycle import ProposalStatus, Verdict
from kavi.promotion.registry import registry_drift, write_registry
from kavi.proposals.model import parse_proposal
from kavi.skills.base import SideEffectClass
from kavi.verdicts import ALL_GATES, GateResult

SOURCE = b"# a verified skill\n"


def _no_llm() -> Any:
    raise AssertionError("promotion must not call a model")


def _ctx(home: KaviHome, **settings: Any) -> ForgeContext:
    return ForgeContext.open(home, _no_llm, ForgeSettings(**settings))


def _build(ctx: ForgeContext, proposal_data: dict[str, Any], attempt: int, status: str, verdict: Verdict) -> str:
    if attempt == 1:
        ctx.records.register_proposal(parse_proposal(proposal_data), source_path=None, complexity=0.1)
    packet = ctx.store.put(f"packet {attempt}".encode(), "build_packet")
    skill = ctx.store.put(SOURCE, "skill_source")
    tests = ctx.store.put(b"def test_x() -> None: ...\n", "skill_tests")
    build_id = f"word_count-a{attempt}-test"
    ctx.records.start_build("word_count", run_id=None, model="m", endpoint="e", packet=packet, build_id=build_id,
                            attempt=attempt, parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build(build_id, status=status, failure_kind=None, skill_sha256=skill.sha256,
                             test_sha256=tests.sha256)
    ctx.records.record_gate_results(build_id, [GateResult(g, verdict, "r", 0.1) for g in ALL_GATES])
    return build_id


def test_no_build_no_promotion(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    ctx = _ctx(kavi_home)
    ctx.records.register_proposal(parse_proposal(proposal_data), source_path=None, complexity=0.1)
    with pytest.raises(PromotionRefused, match="no build"):
        promote(ctx, "word_count")
    with pytest.raises(PromotionRefused, match="no build"):
        approve(ctx, "word_count", "ana")


def test_failed_report_refused_even_with_approval_attempt(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    ctx = _ctx(kavi_home)
    _build(ctx, proposal_data, 1, "VERIFY_FAILED", Verdict.FAILED)
    with pytest.raises(PromotionRefused, match="did not pass verification"):
        approve(ctx, "word_count", "ana")
    with pytest.raises(PromotionRefused, match="did not pass verification"):
        promote(ctx, "word_count")
    assert not kavi_home.skill_version_file("word_count", 1).exists()


def test_omitted_without_reason_counts_as_failed(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    ctx = _ctx(kavi_home)
    build_id = _build(ctx, proposal_data, 1, "VERIFIED", Verdict.PASSED)
    ctx.records.record_gate_results(build_id, [GateResult("coverage", Verdict.OMITTED, "", 0.0)])
    with pytest.raises(PromotionRefused, match="coverage"):
        promote(ctx, "word_count")


def test_waits_for_approval_then_promotes(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    ctx = _ctx(kavi_home)
    _build(ctx, proposal_data, 1, "VERIFIED", Verdict.PASSED)
    out = promote(ctx, "word_count")
    assert not out.promoted and "awaiting approval" in out.reason
    assert not kavi_home.skill_version_file("word_count", 1).exists()
    approve(ctx, "word_count", "ana")
    out = promote(ctx, "word_count")
    assert out.promoted and out.approved_by == "ana"
    assert sha256_bytes(kavi_home.skill_version_file("word_count", 1).read_bytes()) == sha256_bytes(SOURCE)
    assert ctx.records.require_proposal("word_count").status is ProposalStatus.TRUSTED
    # The promotion step leaves the registry projection to the skill_registry asset (it grew with the registry).
    assert not kavi_home.registry_path.exists()
    assert registry_drift(ctx.records, kavi_home.registry_path)
    write_registry(ctx.records, kavi_home.registry_path)
    assert registry_drift(ctx.records, kavi_home.registry_path) == []
    assert ctx.records.verify_promotion_chain() == []


def test_only_latest_attempt_promotes(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    ctx = _ctx(kavi_home)
    _build(ctx, proposal_data, 1, "VERIFIED", Verdict.PASSED)
    _build(ctx, proposal_data, 2, "VERIFY_FAILED", Verdict.FAILED)
    with pytest.raises(PromotionRefused, match="attempt 2"):
        approve(ctx, "word_count", "ana")


def test_auto_approve_only_when_switched_on(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    ctx = _ctx(kavi_home, auto_approve=(SideEffectClass.READ_ONLY,))
    _build(ctx, proposal_data, 1, "VERIFIED", Verdict.PASSED)
    out = promote(ctx, "word_count")
    assert out.promoted and out.approved_by and "auto-approve" in out.approved_by
