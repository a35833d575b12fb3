"""The forge core without Dagster, on the recorded model: gate jobs started ahead of the verification, retry with
facts, allowlist violation, bad answers, models set aside after "not found", and advice that cannot be had."""

import json

import pytest

from kavi.forge.build import run_build
from kavi.forge.context import ForgeContext, ForgeSettings
from kavi.forge.intake import intake
from kavi.forge.packet import load_packet, prepare_packet
from kavi.forge.promote import PromotionRefused, promote
from kavi.forge.research import ResearchOutcome, research
from kavi.forge.verify import VerifyOutcome, verify
from kavi.home import KaviHome
from kavi.lifecycle import FailureKind, ProposalStatus
from kavi.proposals.model import load_proposal
from kavi.routing.thompson import NoModelAvailable
from kavi.sandbox import held
from resources.llm import LLMResource
from tests.factories import REPO, require_gate_sandbox, warm_mypy_cache_root

EXAMPLES = REPO / "kavi" / "examples" / "proposals"


def _ctx(home: KaviHome, models: list[str] | None = None, **settings: object) -> ForgeContext:
    llm = LLMResource(models=models or [])
    return ForgeContext.open(home, llm.get_client, ForgeSettings(**settings))  # type: ignore[arg-type]


def _attempt(ctx: ForgeContext, name: str) -> tuple[VerifyOutcome, ResearchOutcome | None]:
    prepare_packet(ctx, name, run_id=None)
    run_build(ctx, name, run_id=None)
    out = verify(ctx, name, run_id=None)
    return out, (None if out.passed else research(ctx, name, out))


def _propose(ctx: ForgeContext, name: str) -> None:
    intake(ctx, load_proposal(EXAMPLES / f"{name}.yaml"), None)


def test_ruff_failure_then_fixed_with_facts_in_the_next_packet(kavi_home: KaviHome) -> None:
    ctx = _ctx(kavi_home, ["recorded-coder-a"])
    _propose(ctx, "slugify_title")
    first, note = _attempt(ctx, "slugify_title")
    assert not first.passed and note is not None
    assert note.kind is FailureKind.VERIFY_LINT and not note.escalated
    assert any("F401" in m for m in note.facts["gates"]["ruff"]["messages"])
    assert ctx.records.require_proposal("slugify_title").status is ProposalStatus.FAILED
    packet = prepare_packet(ctx, "slugify_title", run_id=None)
    assert packet.attempt == 2 and packet.prior_failures == 1
    build = ctx.records.latest_build("slugify_title")
    assert build is not None
    user_prompt = load_packet(ctx, build)["messages"][1]["content"]
    assert "F401" in user_prompt and "holdout" not in user_prompt.lower().replace("hidden acceptance", "")
    run_build(ctx, "slugify_title", run_id=None)
    second = verify(ctx, "slugify_title", run_id=None)
    assert second.passed, [(r.gate, r.messages) for r in second.results if not r.ok]


def test_the_build_starts_its_gate_jobs_ahead_and_the_verification_runs_them(kavi_home: KaviHome) -> None:
    """While the build waits for its model, its pytest and mypy jobs start (their sandboxes built, their tools
    imported) in the build's sandbox folder; the verification writes the files into it and runs those jobs."""
    require_gate_sandbox()
    ctx = _ctx(kavi_home, ["recorded-coder-a"])
    _propose(ctx, "word_count")
    prepare_packet(ctx, "word_count", run_id=None)
    warm_mypy_cache_root(kavi_home.root / "cache" / "mypy")
    run_build(ctx, "word_count", run_id=None)
    build = ctx.records.latest_build("word_count")
    assert build is not None
    log = json.loads(ctx.store.get(ctx.records.build_artifacts(build.build_id)["build_log"]))["log"]
    assert any(line.endswith("gate jobs started ahead of the answer: pytest, mypy") for line in log), log
    assert held.holds(kavi_home.sandboxes_dir / build.build_id / "gates" / "pytest")
    out = verify(ctx, "word_count", run_id=None)
    assert out.passed, [(r.gate, r.reason) for r in out.results if not r.ok]
    assert out.isolation["interpreter"] == held.HELD_INTERPRETER
    assert not held.holds(kavi_home.sandboxes_dir / build.build_id / "gates" / "pytest")
    assert not held.holds(kavi_home.sandboxes_dir / build.build_id / "gates" / "static")


def test_allowlist_violation_touches_nothing(kavi_home: KaviHome) -> None:
    ctx = _ctx(kavi_home, ["recorded-coder-a"])
    _propose(ctx, "extract_emails")
    out, note = _attempt(ctx, "extract_emails")
    assert not out.ran and note is not None
    assert note.kind is FailureKind.GATE_VIOLATION and note.escalated
    assert any("escape.py" in v for v in note.facts["violations"])
    assert ctx.records.require_proposal("extract_emails").status is ProposalStatus.GATE_VIOLATION
    assert not list(kavi_home.skills_dir.iterdir())
    assert not list(kavi_home.sandboxes_dir.iterdir())
    assert not list(kavi_home.root.parent.rglob("escape.py"))
    with pytest.raises(PromotionRefused):
        promote(ctx, "extract_emails")


def test_answer_that_is_not_json(kavi_home: KaviHome) -> None:
    ctx = _ctx(kavi_home, ["recorded-coder-a"])
    _propose(ctx, "parse_duration")
    _, note = _attempt(ctx, "parse_duration")
    assert note is not None and note.kind is FailureKind.LLM_BAD_OUTPUT
    assert "not JSON" in note.facts["error"]


def test_model_not_found_is_set_aside(kavi_home: KaviHome) -> None:
    ctx = _ctx(kavi_home, ["ghost-model"])
    _propose(ctx, "word_count")
    _, note = _attempt(ctx, "word_count")
    assert note is not None and note.kind is FailureKind.LLM_UNAVAILABLE
    assert "TERMINAL_LLM_ERROR" in note.triggers and note.escalated
    client = ctx.llm_factory()
    assert "ghost-model" in ctx.records.models_set_aside(client.config_fingerprint)
    assert not list(kavi_home.sandboxes_dir.iterdir())  # what was started for its verification is gone
    with pytest.raises(NoModelAvailable, match="set aside"):
        prepare_packet(ctx, "word_count", run_id=None)



def test_set_aside_model_is_never_routed_again_in_that_configuration(kavi_home: KaviHome) -> None:
    ctx = _ctx(kavi_home, ["ghost-model", "recorded-coder-a"])
    _propose(ctx, "word_count")
    fingerprint = ctx.llm_factory().config_fingerprint
    for _ in range(8):
        packet = prepare_packet(ctx, "word_count", run_id=None)
        run_build(ctx, "word_count", run_id=None)
        if packet.model == "ghost-model":
            break
    assert "ghost-model" in ctx.records.models_set_aside(fingerprint)
    for _ in range(3):
        packet = prepare_packet(ctx, "word_count", run_id=None)
        assert packet.model == "recorded-coder-a"
        assert "set aside: ghost-model" in packet.routing["reason"]
        run_build(ctx, "word_count", run_id=None)


def test_advice_unavailable_escalates_as_ambiguous(kavi_home: KaviHome) -> None:
    ctx = _ctx(kavi_home, ["recorded-coder-a"], research_advice=True, advice_timeout_s=5.0)
    _propose(ctx, "slugify_title")
    _, note = _attempt(ctx, "slugify_title")
    assert note is not None and "AMBIGUOUS" in note.triggers and note.escalated
