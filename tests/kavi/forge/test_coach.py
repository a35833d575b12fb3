"""The coach (a second model's review after the deterministic gates) and the ceremony levels, on the recorded model:
never the builder's model, findings to the research note and the next packet, the coach's own failures kept apart
from the builder's, levels from the score, raised or (with an override) lowered by a person, and strict promotion
that waits for a person's approval."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kavi.forge.build import run_build
from kavi.forge.ceremony import (
    STRICT_EXTRA_ATTEMPTS,
    CeremonyChangeRefused,
    CeremonyLevel,
    ceremony_for,
    ceremony_plan,
)
from kavi.forge.coach import (
    MAX_FINDINGS,
    BadCoachAnswer,
    coach_choice,
    parse_coach_answer,
    render_coach_messages,
)
from kavi.forge.context import ForgeContext, ForgeSettings
from kavi.forge.intake import intake
from kavi.forge.levels import proposal_ceremony, set_level
from kavi.forge.packet import load_packet, prepare_packet
from kavi.forge.promote import PromotionRefused, approve, promotable_build, promote
from kavi.forge.research import research
from kavi.forge.verify import VerifyOutcome, verify
from kavi.home import KaviHome
from kavi.ledger.coach_records import review_summary, reviews
from kavi.lifecycle import FailureKind, Verdict
from kavi.proposals.model import parse_proposal
from kavi.routing.complexity import attempt_budget
from kavi.skills.base import SideEffectClass
from kavi.verdicts import GATE_COACH, GATE_COVERAGE, GATE_PYTEST, GateResult
from kavi_assets.cli.main import app
from resources.llm import LLMResource
from tests.factories import SIGN_OF_SPEC, sign_of_source

SPEC = SIGN_OF_SPEC

SKILL = sign_of_source()

TESTS = '''from skills.sign_of import SignOf, SignOfInput


def sign(n: int) -> int:
    return SignOf().execute(SignOfInput(n=n)).sign


def test_positive() -> None:
    assert sign(5) == 1


def test_negative() -> None:
    assert sign(-3) == -1


def test_zero() -> None:
    assert sign(0) == 0
'''
# Tests that run but never reach the skill's code: the coverage gate fails them.
UNCOVERED_TESTS = '''def test_one() -> None:
    assert 1 + 1 == 2


def test_two() -> None:
    assert "a".upper() == "A"


def test_three() -> None:
    assert [1][0] == 1
'''
ZERO_TESTS = '''from skills.sign_of import SignOf

HELPER = SignOf
'''
CLAIM = "ALL TESTS PASS - this build is correct and ready to ship"
APPROVE = json.dumps({"verdict": "approve", "findings": []})
CHANGES = json.dumps({"verdict": "request_changes", "findings": [
    {"kind": "test_asserts_nothing", "detail": "test_zero compares a value with itself", "where": "test_zero"},
    {"kind": "requirement_not_met", "detail": "large negative numbers are not covered by a test"}]})
TWO = ["recorded-coder-a", "recorded-coder-b"]


def _cassettes(tmp_path: Path, coach: list[dict[str, Any]] | None, tests: str = TESTS) -> Path:
    folder = tmp_path / "cassettes"
    folder.mkdir(exist_ok=True)
    interactions: list[dict[str, Any]] = [
        {"kind": "build", "files": {"skills/sign_of.py": SKILL, "tests/test_skill_sign_of.py": tests},
         "notes": CLAIM}]
    interactions += [{"kind": "coach", **c} for c in coach or []]
    (folder / "sign_of.yaml").write_text(yaml.safe_dump(
        {"skill": "sign_of", "models": TWO, "interactions": interactions}))
    return folder


def _ctx(home: KaviHome, cassettes: Path, models: list[str] = TWO, **settings: Any) -> ForgeContext:
    llm = LLMResource(models=models, cassette_dir=str(cassettes))
    settings.setdefault("evidence_levels", ())  # the coach is under test here, not the generated-input evidence
    return ForgeContext.open(home, llm.get_client, ForgeSettings(**settings))


def _forge(ctx: ForgeContext, level: str | None = "standard") -> None:
    intake(ctx, parse_proposal(SPEC), None)
    if level is not None and level != "low":
        set_level(ctx.records, "sign_of", level, actor="ada")


def _attempt(ctx: ForgeContext) -> VerifyOutcome:
    prepare_packet(ctx, "sign_of", run_id=None)
    run_build(ctx, "sign_of", run_id=None)
    return verify(ctx, "sign_of", run_id=None)


def _coach(out: VerifyOutcome) -> GateResult:
    return next(r for r in out.results if r.gate == GATE_COACH)


def test_coach_approves_and_is_never_the_builders_model(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, [{"raw": APPROVE}]))
    _forge(ctx)
    out = _attempt(ctx)
    coach = _coach(out)
    assert out.passed and coach.verdict is Verdict.PASSED, [(r.gate, r.reason) for r in out.results]
    build = ctx.records.latest_build("sign_of")
    assert build is not None and build.model in TWO
    rows = reviews(ctx.records, "sign_of")
    assert [r.status for r in rows] == ["APPROVE"]
    assert rows[0].model != build.model and coach.details["coach_model"] == rows[0].model
    assert coach.details["builder_model"] == build.model
    # Whichever model builds, the coach is the other one; with one model there is none.
    client = ctx.llm_factory()
    for builder in TWO:
        choice = coach_choice(ctx, client, dataclass_replace(build, model=builder), parse_proposal(SPEC))
        assert choice.model is not None and choice.model != builder
    # The builder's own claim of success is never an input of the review.
    request = ctx.store.get(rows[0].request_sha256 or "").decode()
    assert CLAIM not in request and "def execute" in request and "test_positive" in request
    assert {r["gate"]: r["verdict"] for r in ctx.records.gate_results(build.build_id)}[GATE_COACH] == "passed"


def dataclass_replace(obj: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(obj, **changes)


def test_one_model_omits_the_coach_with_the_reason(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, [{"raw": CHANGES}]), models=["recorded-coder-a"])
    _forge(ctx)
    out = _attempt(ctx)
    coach = _coach(out)
    assert out.passed and coach.verdict is Verdict.OMITTED and "no second model configured" in coach.reason
    assert reviews(ctx.records, "sign_of") == []


def test_request_changes_fails_and_the_findings_reach_the_note_and_the_next_packet(
        kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, [{"attempt": 1, "raw": CHANGES}, {"attempt": "*", "raw": APPROVE}]))
    _forge(ctx)
    out = _attempt(ctx)
    coach = _coach(out)
    assert not out.passed and coach.verdict is Verdict.FAILED
    assert all(r.ok for r in out.results if r.gate != GATE_COACH)
    assert any("test_zero compares a value with itself" in m for m in coach.messages)
    with pytest.raises(PromotionRefused):
        promotable_build(ctx, "sign_of")
    note = research(ctx, "sign_of", out)
    assert note.kind is FailureKind.COACH_CHANGES_REQUESTED and not note.escalated
    stored = json.loads(ctx.store.get(note.note_sha256))
    assert stored["counts_against_model"] is True
    assert stored["facts"]["gates"]["coach"]["findings"][0]["kind"] == "test_asserts_nothing"
    prepare_packet(ctx, "sign_of", run_id=None)
    build = ctx.records.latest_build("sign_of")
    assert build is not None and build.attempt_number == 2
    prompt = load_packet(ctx, build)["messages"][1]["content"]
    assert "gate coach" in prompt and "test_zero compares a value with itself" in prompt
    run_build(ctx, "sign_of", run_id=None)
    second = verify(ctx, "sign_of", run_id=None)
    assert second.passed and _coach(second).verdict is Verdict.PASSED


@pytest.mark.parametrize("coach", [
    [{"raw": "Looks good to me! Ship it."}],
    [{"raw": json.dumps({"verdict": "maybe", "findings": []})}],
    [{"error": {"status": 400, "message": "the reviewer's endpoint rejected the request"}}],
], ids=["prose", "outside-the-schema", "endpoint-error"])
def test_a_coach_that_cannot_answer_is_the_coachs_failure_not_the_builders(
        kavi_home: KaviHome, tmp_path: Path, coach: list[dict[str, Any]]) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, coach))
    _forge(ctx)
    out = _attempt(ctx)
    gate = _coach(out)
    assert not out.passed and gate.verdict is Verdict.FAILED and gate.details.get("coach_failure")
    assert "not the builder's" in gate.reason
    rows = reviews(ctx.records, "sign_of")
    assert len(rows) == 2 and {r.status for r in rows} <= {"UNUSABLE", "LLM_ERROR"}  # asked, then asked again
    note = research(ctx, "sign_of", out)
    assert note.kind is FailureKind.INFRASTRUCTURE  # filed as the coach's (the forge's side), not a builder's kind
    stored = json.loads(ctx.store.get(note.note_sha256))
    assert stored["counts_against_model"] is False
    assert ctx.records.model_outcomes() == []  # the builder's record is untouched
    build = ctx.records.latest_build("sign_of")
    assert build is not None and build.failure_kind == FailureKind.INFRASTRUCTURE.value
    # The note and the next packet say so: not judged, the coach's failure (not a generic infrastructure failure,
    # never the builder's).
    assert stored["facts"]["not_judged"].startswith("the coach could not review; the build was not judged")
    assert stored["next"].startswith("the coach could not review; the build was not judged")
    prepare_packet(ctx, "sign_of", run_id=None)
    nxt = ctx.records.latest_build("sign_of")
    assert nxt is not None and nxt.attempt_number == 2
    prompt = load_packet(ctx, nxt)["messages"][1]["content"]
    assert "Attempt 1 was not judged: the coach could not review" in prompt, prompt
    assert "Attempt 1 failed" not in prompt


def test_coach_outcomes_never_move_the_builders_posteriors(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, [{"attempt": 1, "raw": CHANGES}, {"attempt": "*", "raw": APPROVE}]))
    _forge(ctx)
    from kavi.routing.task_type import task_type

    ttype = task_type(SideEffectClass.READ_ONLY, ceremony_for(parse_proposal(SPEC)).score)
    before = (ctx.records.outcome_counts(ttype), ctx.records.outcome_summary())
    out = _attempt(ctx)
    assert not out.passed
    # The coach's review is recorded (per model, apart) and the builder's counts have not moved.
    assert (ctx.records.outcome_counts(ttype), ctx.records.outcome_summary()) == before
    coach_model = reviews(ctx.records, "sign_of")[0].model
    assert review_summary(ctx.records) == [(coach_model, ttype, 0, 1, 0)]
    research(ctx, "sign_of", out)  # the builder's failure is the builder's, recorded once
    build = ctx.records.latest_build("sign_of")
    assert build is not None
    assert [(o["model"], o["success"]) for o in ctx.records.model_outcomes()] == [(build.model, False)]
    assert coach_model not in ctx.records.outcome_counts(ttype) or coach_model == build.model


def test_no_coach_recording_and_no_live_endpoint_omits_the_coach(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, None))
    _forge(ctx)
    out = _attempt(ctx)
    coach = _coach(out)
    assert out.passed and coach.verdict is Verdict.OMITTED and "no coach review recorded" in coach.reason


def test_the_level_comes_from_the_score_and_is_in_the_report(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, [{"raw": CHANGES}]))
    _forge(ctx, level=None)
    assert ceremony_for(parse_proposal(SPEC)).level is CeremonyLevel.LOW
    out = _attempt(ctx)
    coach = _coach(out)
    assert out.passed and coach.verdict is Verdict.OMITTED and coach.reason.startswith("ceremony low")
    report = json.loads(ctx.store.get(out.report_sha256))
    plan = report["ceremony"]
    assert plan["level"] == "low" and plan["score_level"] == "low" and "complexity" in plan["reason"]
    assert any("coach review" in s for s in plan["skipped"]) and out.ceremony == plan
    assert reviews(ctx.records, "sign_of") == []


def test_level_changes_raise_freely_and_lower_only_with_a_recorded_override(kavi_home: KaviHome) -> None:
    ctx = _ctx(kavi_home, kavi_home.root)
    data = {**SPEC, "side_effect_class": "FILE_WRITE", "description": SPEC["description"] + " " + " ".join(
        ["Parse, validate, sort and merge the nested schedule with a timezone and unicode date graph."] * 4)}
    data["inputs"] = [{"name": "n", "type": "int"}, {"name": "items", "type": "list[str]", "required": False},
                      {"name": "extra", "type": "dict[str, int] | None", "required": False}]
    intake(ctx, parse_proposal(data), None)
    score_level = ceremony_for(parse_proposal(data)).level
    assert score_level is CeremonyLevel.STANDARD
    raised = set_level(ctx.records, "sign_of", "strict", actor="ada")
    assert raised.after.level is CeremonyLevel.STRICT and not raised.override and "raised to strict by ada" in \
        raised.after.reason
    with pytest.raises(CeremonyChangeRefused, match="--override --reason"):
        set_level(ctx.records, "sign_of", "low", actor="bob")
    with pytest.raises(CeremonyChangeRefused, match="--override --reason"):
        set_level(ctx.records, "sign_of", "low", actor="bob", override=True, reason="  ")
    with pytest.raises(CeremonyChangeRefused, match="only for a level below"):
        set_level(ctx.records, "sign_of", "strict", actor="bob", override=True, reason="x")
    with pytest.raises(CeremonyChangeRefused, match="--by WHO"):
        set_level(ctx.records, "sign_of", "strict", actor=" ")
    with pytest.raises(CeremonyChangeRefused, match="one of low, standard, strict"):
        set_level(ctx.records, "sign_of", "lax", actor="bob")
    assert proposal_ceremony(ctx.records, "sign_of", parse_proposal(data)).level is CeremonyLevel.STRICT
    lowered = set_level(ctx.records, "sign_of", "low", actor="bob", override=True, reason="a toy for the demo")
    assert lowered.override and lowered.after.level is CeremonyLevel.LOW
    assert "override: a toy for the demo" in lowered.after.reason and lowered.after.score_level is score_level
    # Back at the score's level: no override needed (it is not below it).
    assert set_level(ctx.records, "sign_of", "standard", actor="cy").after.level is CeremonyLevel.STANDARD
    # Through the CLI: recorded with who; a refused change is one line and exit 2.
    runner = CliRunner()
    ok = runner.invoke(app, ["ceremony", "sign_of", "--level", "strict", "--by", "dee"])
    assert ok.exit_code == 0 and "strict" in ok.output, ok.output
    refused = runner.invoke(app, ["ceremony", "sign_of", "--level", "low", "--by", "dee"])
    assert refused.exit_code == 2 and "--override --reason" in refused.output and "Traceback" not in refused.output
    shown = runner.invoke(app, ["ceremony", "sign_of", "--json"])
    doc = json.loads(shown.output)
    assert doc["level"] == "strict" and doc["score_level"] == "standard"
    assert [h["actor"] for h in doc["history"]] == ["ada", "bob", "cy", "dee"]
    assert doc["history"][1]["override"] is True and doc["history"][1]["reason"] == "a toy for the demo"
    missing = runner.invoke(app, ["ceremony", "no_such_skill", "--level", "strict", "--by", "dee"])
    assert missing.exit_code != 0 and "Traceback" not in missing.output


def test_strict_blocks_promotion_until_a_person_approves(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, [{"raw": APPROVE}]), auto_approve=(SideEffectClass.READ_ONLY,))
    _forge(ctx, level="strict")
    packet = prepare_packet(ctx, "sign_of", run_id=None)
    base = attempt_budget(ceremony_for(parse_proposal(SPEC)).score)
    assert packet.budget == base + STRICT_EXTRA_ATTEMPTS  # strict: a larger attempt budget
    run_build(ctx, "sign_of", run_id=None)
    out = verify(ctx, "sign_of", run_id=None)
    assert out.passed and _coach(out).details["full_review"] is True
    assert out.ceremony["level"] == "strict" and out.ceremony["human_approval"] is True
    refused = promote(ctx, "sign_of")  # READ_ONLY auto-approve is on: strict still waits for a person
    assert not refused.promoted and "ceremony level strict" in refused.reason
    assert ctx.records.trusted("sign_of") == []
    approve(ctx, "sign_of", "ada")
    done = promote(ctx, "sign_of")
    assert done.promoted and done.approved_by == "ada"


def test_standard_with_auto_approve_promotes_without_a_person(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, [{"raw": APPROVE}]), auto_approve=(SideEffectClass.READ_ONLY,))
    _forge(ctx, level="standard")
    assert _attempt(ctx).passed
    done = promote(ctx, "sign_of")
    assert done.promoted and "auto-approve" in str(done.approved_by)


@pytest.mark.parametrize("level", ["low", "standard", "strict"])
def test_zero_tests_and_coverage_block_at_every_level(kavi_home: KaviHome, tmp_path: Path, level: str) -> None:
    for tests, gate in ((ZERO_TESTS, GATE_PYTEST), (UNCOVERED_TESTS, GATE_COVERAGE)):
        folder = tmp_path / gate
        folder.mkdir()
        ctx = _ctx(KaviHome(tmp_path / f"home-{gate}").ensure(), _cassettes(folder, [{"raw": APPROVE}], tests))
        _forge(ctx, level=level)
        out = _attempt(ctx)
        failed = next(r for r in out.results if r.gate == gate)
        assert failed.verdict is Verdict.FAILED and not out.passed, (level, gate, failed.reason)
        assert _coach(out).verdict is Verdict.OMITTED  # the coach never reviews (or rescues) a failed attempt
        with pytest.raises(PromotionRefused):
            promotable_build(ctx, "sign_of")
        assert ceremony_plan(proposal_ceremony(ctx.records, "sign_of", parse_proposal(SPEC)))["level"] == level


def test_coach_answers_are_parsed_strictly() -> None:
    assert parse_coach_answer(APPROVE).verdict == "approve"
    assert len(parse_coach_answer("```json\n" + CHANGES + "\n```").findings) == 2
    finding = {"kind": "suspicious_behaviour", "detail": "x"}
    bad = [
        "",
        "approve",
        '{"verdict": "approve"} and more',
        json.dumps({"verdict": "approve", "findings": [], "confidence": 0.9}),
        json.dumps({"verdict": "request_changes", "findings": []}),
        json.dumps({"verdict": "approve", "findings": [{"kind": "style", "detail": "x"}]}),
        json.dumps({"verdict": "approve", "findings": [{**finding, "detail": ""}]}),
        json.dumps({"verdict": "approve", "findings": [{**finding, "detail": "x" * 1001}]}),
        json.dumps({"verdict": "approve", "findings": [{**finding, "where": 12}]}),
        json.dumps({"verdict": "request_changes", "findings": [finding] * (MAX_FINDINGS + 1)}),
        json.dumps({"verdict": True, "findings": []}),
        json.dumps(["approve"]),
        "{" + " " * 30000 + "}",
    ]
    for text in bad:
        with pytest.raises(BadCoachAnswer):
            parse_coach_answer(text)


def test_the_full_review_shows_more_than_the_standard_one() -> None:
    results = [GateResult("pytest", Verdict.PASSED, "3 passed", 0.1, ["test_a PASSED", "test_b PASSED"])]
    long_tests = TESTS + "\n# padding\n" * 600
    args: dict[str, Any] = dict(skill_name="sign_of", code=SKILL, tests=long_tests, results=results,
                                max_chars=24000)
    standard = render_coach_messages(SPEC, full=False, **args)[1]["content"]
    full = render_coach_messages(SPEC, full=True, **args)[1]["content"]
    assert "test_a PASSED" not in standard and "test_a PASSED" in full
    assert "more characters not shown" in standard and long_tests in full
