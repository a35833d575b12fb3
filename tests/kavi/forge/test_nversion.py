"""N-version evidence in the forge core, on the recorded model: a second model's independent implementation of the
same spec, compared with the candidate on generated inputs; ceremony levels; the cache per spec digest; holdouts a
person adds from a counterexample."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kavi.forge.build import run_build
from kavi.forge.ceremony import CeremonyLevel, ceremony_for, evidence_decision, parse_levels, scale_of
from kavi.forge.context import ForgeContext, ForgeSettings
from kavi.forge.holdouts import HoldoutError, add_holdout, counterexample_input, counterexamples
from kavi.forge.independent import NO_SECOND_MODEL, choose_model, obtain_independent
from kavi.forge.intake import intake
from kavi.forge.packet import load_packet, prepare_packet
from kavi.forge.promote import PromotionRefused, promotable_build
from kavi.forge.research import record_success, research
from kavi.forge.verify import VerifyOutcome, evidence_markdown, verify
from kavi.home import KaviHome
from kavi.lifecycle import Verdict
from kavi.proposals.model import load_proposal, parse_proposal
from kavi.settings import config_problems
from kavi.settings_parsers import ConfigError
from kavi.verdicts import GATE_ACCEPTANCE, GATE_DIFFERENTIAL
from kavi_assets.cli.main import app
from resources.gates import GateRunnerResource
from resources.llm import LLMResource
from tests.factories import REPO, SIGN_OF_SPEC, SIGN_OF_TESTS, sign_of_source

EXAMPLES = REPO / "kavi" / "examples" / "proposals"
ALL_LEVELS = ("low", "standard", "strict")

SPEC = SIGN_OF_SPEC

HONEST = sign_of_source("1 if n > 0 else (-1 if n < 0 else 0)")
WRONG = sign_of_source("1 if n >= 0 else -1")  # forgets zero: passes the example and the holdout
INDEPENDENT = sign_of_source("(n > 0) - (n < 0)")

TESTS = SIGN_OF_TESTS


def _cassettes(tmp_path: Path, candidate: str, independent: str | None = INDEPENDENT, *, raw: str | None = None
               ) -> Path:
    folder = tmp_path / "cassettes"
    folder.mkdir(exist_ok=True)
    interactions: list[dict[str, Any]] = [
        {"kind": "build", "files": {"skills/sign_of.py": candidate, "tests/test_skill_sign_of.py": TESTS}}]
    if raw is not None:
        interactions.append({"kind": "independent", "raw": raw})
    elif independent is not None:
        interactions.append({"kind": "independent", "files": {"skills/sign_of.py": independent}})
    (folder / "sign_of.yaml").write_text(yaml.safe_dump(
        {"skill": "sign_of", "models": ["recorded-coder-a", "recorded-coder-b"], "interactions": interactions}))
    return folder


def _ctx(home: KaviHome, cassettes: Path, models: list[str], **settings: Any) -> ForgeContext:
    llm = LLMResource(models=models, cassette_dir=str(cassettes))
    settings.setdefault("evidence_levels", ALL_LEVELS)
    return ForgeContext.open(home, llm.get_client, ForgeSettings(**settings))


def _attempt(ctx: ForgeContext, name: str = "sign_of") -> VerifyOutcome:
    prepare_packet(ctx, name, run_id=None)
    run_build(ctx, name, run_id=None)
    return verify(ctx, name, run_id=None)


def _gate(out: VerifyOutcome, gate: str) -> Any:
    return next(r for r in out.results if r.gate == gate)


TWO = ["recorded-coder-a", "recorded-coder-b"]


def test_disagreeing_candidate_is_not_trusted_and_the_counterexample_reaches_note_and_packet(
        kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, WRONG), TWO)
    intake(ctx, parse_proposal(SPEC), None)
    out = _attempt(ctx)
    assert _gate(out, GATE_ACCEPTANCE).ok  # the literal example and holdout do not catch it
    diff = _gate(out, GATE_DIFFERENTIAL)
    assert diff.verdict is Verdict.FAILED and not out.passed
    cases = out.evidence["counterexamples"]
    assert any(c["input"] == {"n": 0} for c in cases), cases
    assert out.evidence["independent"]["used"] and out.evidence["generated"] > 0
    assert out.evidence["agreement_rate"] < 1.0
    shown = evidence_markdown(out.evidence)  # what the verification_report asset's metadata shows
    assert "counterexample 1: input" in shown and "generated inputs" in shown
    with pytest.raises(PromotionRefused):
        promotable_build(ctx, "sign_of")
    note = research(ctx, "sign_of", out)
    stored = json.loads(ctx.store.get(note.note_sha256))
    assert any(c["input"] == {"n": 0} for c in stored["counterexamples"])
    assert "kavi holdout add sign_of --counterexample" in stored["settle"]
    prepare_packet(ctx, "sign_of", run_id=None)
    build = ctx.records.latest_build("sign_of")
    assert build is not None
    prompt = load_packet(ctx, build)["messages"][1]["content"]
    assert "independent implementation" in prompt and '"n": 0' in prompt.replace("'n'", '"n"')


def test_honest_candidate_that_agrees_is_trusted_and_the_independent_is_another_model(
        kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, HONEST), TWO)
    intake(ctx, parse_proposal(SPEC), None)
    out = _attempt(ctx)
    assert out.passed, [(r.gate, r.reason, r.messages) for r in out.results if not r.ok]
    ev = out.evidence
    assert ev["ran"] and ev["agreement_rate"] == 1.0 and ev["counterexamples"] == []
    assert ev["ceremony"]["level"] == "low" and ev["independent"]["used"]
    assert "agreement 100%" in evidence_markdown(ev) and "independent implementation by" in \
        evidence_markdown(ev)
    build = ctx.records.latest_build("sign_of")
    assert build is not None
    rows = ctx.records.independents("sign_of")
    assert len(rows) == 1 and rows[0].status == "OK" and rows[0].model != build.model
    assert ev["independent"]["model"] == rows[0].model and ev["independent"]["sha256"] == rows[0].source_sha256
    report = json.loads(ctx.store.get(out.report_sha256))
    assert report["evidence"]["generated"] == ev["generated"]
    # The mutation analysis ran, and the independent implementation settled what the examples leave open.
    adequacy = report["adequacy"]
    assert adequacy["ran"] and adequacy["verdict"] == "passed" and adequacy["tried"] > 0
    assert adequacy["questions"] == [] and adequacy["settled_by_independent"] >= 1
    # Lineage: spec → answer → independent source → this verification report.
    edges = {(e["relation"], e["child"]) for e in ctx.records.lineage_edges("sign_of")}
    assert ("evidence_for", out.report_sha256) in edges
    assert ("file_of", rows[0].source_sha256) in edges


def test_independent_model_is_never_the_builders() -> None:
    counts = {"a": (9, 0, None), "b": (0, 9, None), "c": (3, 3, None)}
    assert choose_model(["a", "b", "c"], "a", counts=counts, set_aside={}, prior_weight=2.0).model == "c"
    assert choose_model(["a", "b", "c"], "c", counts=counts, set_aside={}, prior_weight=2.0).model == "a"
    assert choose_model(["a", "b"], "a", counts={}, set_aside={"b": "gone"}, prior_weight=2.0).model is None
    alone = choose_model(["a"], "a", counts={}, set_aside={}, prior_weight=2.0)
    assert alone.model is None and alone.reason.startswith(NO_SECOND_MODEL)


def test_no_second_model_omits_the_comparison_and_an_honest_candidate_is_trusted(
        kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, HONEST), ["recorded-coder-a"])
    intake(ctx, parse_proposal(SPEC), None)
    out = _attempt(ctx)
    assert out.passed, [(r.gate, r.reason) for r in out.results if not r.ok]
    ind = out.evidence["independent"]
    assert not ind["used"] and NO_SECOND_MODEL in ind["not_used_because"]
    assert out.evidence["ran"] and out.evidence["generated"] > 0  # the oracle-free checks still ran
    assert ctx.records.independents("sign_of") == []


def test_unparseable_independent_is_the_independent_models_failure(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, HONEST, raw="I would rather explain the idea in prose."), TWO)
    intake(ctx, parse_proposal(SPEC), None)
    out = _attempt(ctx)
    assert out.passed, [(r.gate, r.reason) for r in out.results if not r.ok]
    rows = ctx.records.independents("sign_of")
    assert [r.status for r in rows] == ["UNUSABLE"] and rows[0].answer_sha256 and not rows[0].source_sha256
    assert "not usable" in out.evidence["independent"]["not_used_because"]
    record_success(ctx, "sign_of", out.build_id)
    build = ctx.records.latest_build("sign_of")
    assert build is not None
    outcomes = ctx.records.model_outcomes()
    # The router learns the builder's success and nothing about the independent model's bad answer.
    assert [(o["model"], o["success"]) for o in outcomes] == [(build.model, True)]


def test_wrong_file_from_the_independent_is_unusable(kavi_home: KaviHome, tmp_path: Path) -> None:
    folder = _cassettes(tmp_path, HONEST, None)
    data = yaml.safe_load((folder / "sign_of.yaml").read_text())
    data["interactions"].append({"kind": "independent", "files": {"skills/other.py": INDEPENDENT}})
    (folder / "sign_of.yaml").write_text(yaml.safe_dump(data))
    ctx = _ctx(kavi_home, folder, TWO)
    intake(ctx, parse_proposal(SPEC), None)
    out = _attempt(ctx)
    assert out.passed
    rows = ctx.records.independents("sign_of")
    assert rows[0].status == "UNUSABLE" and "skills/sign_of.py" in str(rows[0].reason)


def test_llm_error_of_the_independent_does_not_fail_the_build(kavi_home: KaviHome, tmp_path: Path) -> None:
    folder = _cassettes(tmp_path, HONEST, None)
    data = yaml.safe_load((folder / "sign_of.yaml").read_text())
    data["interactions"].append({"kind": "independent", "error": {"status": 400, "message": "context too long"}})
    (folder / "sign_of.yaml").write_text(yaml.safe_dump(data))
    ctx = _ctx(kavi_home, folder, TWO)
    intake(ctx, parse_proposal(SPEC), None)
    out = _attempt(ctx)
    assert out.passed
    rows = ctx.records.independents("sign_of")
    assert [r.status for r in rows] == ["LLM_ERROR"]
    assert "model call failed" in out.evidence["independent"]["not_used_because"]


def test_excluded_ceremony_level_omits_the_evidence_with_the_reason(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, WRONG), TWO, evidence_levels=("standard", "strict"))
    intake(ctx, parse_proposal(SPEC), None)
    out = _attempt(ctx)
    diff = _gate(out, GATE_DIFFERENTIAL)
    assert diff.verdict is Verdict.OMITTED and "not one of the evidence levels" in diff.reason
    assert out.passed  # without the evidence, the literal holdouts decide (as before this issue)
    assert not out.evidence["ran"] and "ceremony level low" in out.evidence["why"]
    assert ctx.records.independents("sign_of") == []  # nothing asked


def test_a_new_holdout_invalidates_the_cached_independent(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, WRONG), TWO)
    intake(ctx, parse_proposal(SPEC), None)
    first = _attempt(ctx)
    assert not first.passed
    row = ctx.records.require_proposal("sign_of")
    build = ctx.records.latest_build("sign_of")
    assert build is not None
    again = obtain_independent(ctx, "sign_of", build, row.proposal, row.spec_sha256)
    assert again.reused and again.source is not None  # one request per spec: the next use reads the ledger
    assert len(ctx.records.independents("sign_of")) == 1
    research(ctx, "sign_of", first)
    second = _attempt(ctx)
    second_build = ctx.records.latest_build("sign_of")
    assert second_build is not None
    rows = ctx.records.independents("sign_of")
    if second_build.model != rows[0].model:
        assert len(rows) == 1 and second.evidence["independent"]["reused"]
    else:  # the builder is now the model that wrote the cached one: another model is asked, never the builder
        assert len(rows) == 2 and rows[1].model != second_build.model
    research(ctx, "sign_of", second)
    before = len(rows)
    number = next(c.number for c in counterexamples(ctx, "sign_of") if c.input == {"n": 0})
    assert counterexample_input(ctx, "sign_of", number) == {"n": 0}
    listing = CliRunner().invoke(app, ["holdout", "list", "sign_of"])
    assert listing.exit_code == 0 and f"  {number}. input {{\"n\": 0}}: candidate" in listing.output
    added = CliRunner().invoke(app, ["holdout", "add", "sign_of", "--counterexample", str(number), "--expected",
                                     '{"sign": 0}', "--by", "ada"])
    assert added.exit_code == 0, added.output
    row = ctx.records.require_proposal("sign_of")
    assert row.revision == 2 and row.proposal.holdout_examples[-1].input == {"n": 0}
    assert row.proposal.holdout_examples[-1].expected == {"sign": 0}
    assert ctx.records.revisions("sign_of")[-1].actor == "ada"
    missing = CliRunner().invoke(app, ["holdout", "add", "sign_of", "--counterexample", "99", "--expected",
                                       '{"sign": 0}', "--by", "ada"])
    assert missing.exit_code == 2 and "counterexample 99 does not exist" in missing.output
    third = _attempt(ctx)
    rows = ctx.records.independents("sign_of")
    assert len(rows) == before + 1 and rows[-1].spec_sha256 != rows[0].spec_sha256  # the new spec asked again
    assert not _gate(third, GATE_ACCEPTANCE).ok  # the new holdout now catches the wrong candidate itself
    with pytest.raises(HoldoutError, match="already in the proposal"):
        add_holdout(ctx, "sign_of", {"n": 0}, {"sign": 0}, "ada")


def test_ceremony_levels_and_their_setting() -> None:
    assert [scale_of(s) for s in (0.0, 0.05, 0.1, 0.11, 0.5, 0.79, 0.81, 1.0)] == [1, 1, 1, 2, 5, 8, 9, 10]
    levels = {p.stem: ceremony_for(load_proposal(p)).level for p in EXAMPLES.glob("*.yaml")}
    assert levels["word_count"] is CeremonyLevel.LOW and levels["write_note"] is CeremonyLevel.STANDARD
    assert ForgeSettings().evidence_levels == ALL_LEVELS
    assert parse_levels(None) == tuple(CeremonyLevel) == parse_levels("")
    assert parse_levels("none") == () and parse_levels("all") == tuple(CeremonyLevel)
    assert parse_levels("strict, low") == (CeremonyLevel.STRICT, CeremonyLevel.LOW)
    with pytest.raises(ConfigError, match="KAVI_EVIDENCE_LEVELS entry 'sometimes'"):
        parse_levels("standard,sometimes")
    assert any("KAVI_EVIDENCE_LEVELS" in p for p in config_problems({"KAVI_EVIDENCE_LEVELS": "hi"}))
    runs, why = evidence_decision(ceremony_for(load_proposal(EXAMPLES / "word_count.yaml")), ())
    assert not runs and "none" in why
    res = GateRunnerResource(evidence_levels=["low"])
    assert res.settings().evidence_levels == ("low",)


def test_shipped_independent_answers_pass_the_policy_of_their_proposal() -> None:
    """Each recorded independent answer is usable evidence: one file, its skill's path, within its class."""
    from kavi.gates.static import policy_gate
    from kavi.llm.answer import parse_independent_answer
    from kavi.llm.recorded import default_cassette_dir, load_cassettes

    index = load_cassettes(default_cassette_dir())
    found = 0
    for skill, interactions in index.by_skill.items():
        for it in interactions:
            if it.kind != "independent":
                continue
            found += 1
            source = parse_independent_answer(it.content(), skill)
            result = policy_gate(source, load_proposal(EXAMPLES / f"{skill}.yaml"), None)
            assert result.ok, (skill, result.messages)
    assert found >= 9


def test_an_independent_that_fails_a_new_holdout_is_discarded(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx = _ctx(kavi_home, _cassettes(tmp_path, WRONG), TWO)
    intake(ctx, parse_proposal(SPEC), None)
    first = _attempt(ctx)
    assert not first.passed
    research(ctx, "sign_of", first)
    # The person settles the counterexample the other way: zero counts as positive here.
    add_holdout(ctx, "sign_of", {"n": 0}, {"sign": 1}, "ada")
    second = _attempt(ctx)
    ind = second.evidence["independent"]
    assert not ind["used"] and "holdout" in ind["not_used_because"]
    assert second.passed, [(r.gate, r.reason) for r in second.results if not r.ok]
