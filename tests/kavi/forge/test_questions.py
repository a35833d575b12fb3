"""The questions the evidence leaves open, as a person meets them: listed by `kavi questions`, answered by `kavi answer`
(a holdout, or an input declared outside the domain, each a recorded revision of the spec), and weighed by the
ceremony level at promotion (low: reported; standard: auto-approval withheld, a person may approve anyway; strict:
blocked until answered)."""

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from kavi.forge.holdouts import HoldoutError
from kavi.forge.levels import set_level
from kavi.forge.promote import approve, promote
from kavi.forge.questions import answer, declare_outside, open_questions, questions
from kavi.home import KaviHome
from kavi.lifecycle import Verdict
from kavi.verdicts import DETERMINISTIC_GATES, GATE_ADEQUACY, GateResult
from kavi_assets.cli.main import app
from tests.factories import SIGN_OF_SPEC, forge_ctx, sign_of_source, verified_candidate

runner = CliRunner()
QUESTION = {"number": 1, "kind": "mutant", "input": {"n": 0}, "candidate": {"sign": 1},
            "alternatives": [{"sign": -1}], "mutants": ["line 25 (SignOf.execute): >= → >"]}
CRASH = {"number": 2, "kind": "crash", "input": {"n": 1000}, "alternatives": [], "mutants": [],
         "candidate": "<raises IndexError: list index out of range>"}


def _gates(*asked: dict[str, Any]) -> list[GateResult]:
    adequacy = GateResult(GATE_ADEQUACY, Verdict.PASSED, f"4 mutants: 2 killed, 1 surviving, 1 equivalent; "
                          f"{len(asked)} open question(s) for a person", 0.1,
                          details={"tried": 4, "killed": 2, "surviving": 1, "equivalent": 1,
                                   "questions": list(asked)})
    return [adequacy if g == GATE_ADEQUACY else GateResult(g, Verdict.PASSED, "ok", 0.1)
            for g in DETERMINISTIC_GATES]


def _candidate(home: KaviHome, level: str, *asked: dict[str, Any]) -> None:
    verified_candidate(home, SIGN_OF_SPEC, sign_of_source("1 if n >= 0 else -1"), gates=_gates(*asked))
    ctx = forge_ctx(home)
    if level != "low":
        set_level(ctx.records, "sign_of", level, actor="ada")


def test_standard_withholds_auto_approval_while_a_question_is_open(kavi_home: KaviHome) -> None:
    _candidate(kavi_home, "standard", QUESTION)
    ctx = forge_ctx(kavi_home, auto_approve=("READ_ONLY",))
    out = promote(ctx, "sign_of")
    assert not out.promoted and "1 open question(s)" in out.reason and "kavi questions sign_of" in out.reason
    # A person may approve anyway: recorded, and the promotion says so.
    approve(ctx, "sign_of", "ada")
    out = promote(ctx, "sign_of")
    assert out.promoted and out.approved_by == "ada" and "with 1 open question(s)" in out.reason


def test_strict_blocks_promotion_until_each_question_is_answered(kavi_home: KaviHome) -> None:
    _candidate(kavi_home, "strict", QUESTION)
    ctx = forge_ctx(kavi_home)
    approve(ctx, "sign_of", "ada")
    out = promote(ctx, "sign_of")
    assert not out.promoted and out.reason.startswith("blocked: 1 open question(s)")
    answer(ctx, "sign_of", 1, {"sign": 0}, "ada")
    assert open_questions(ctx, "sign_of") == []  # answered: the spec decides the input now; a re-forge judges it


def test_low_only_reports(kavi_home: KaviHome) -> None:
    _candidate(kavi_home, "low", QUESTION)
    out = promote(forge_ctx(kavi_home, auto_approve=("READ_ONLY",)), "sign_of")
    assert out.promoted, out.reason


def test_an_answer_is_a_holdout_recorded_as_a_revision(kavi_home: KaviHome) -> None:
    _candidate(kavi_home, "standard", QUESTION, CRASH)
    ctx = forge_ctx(kavi_home)
    before = ctx.records.require_proposal("sign_of").revision
    asked = questions(ctx, "sign_of")
    assert [q.number for q in asked] == [1, 2] and not any(q.answered for q in asked)
    assert "which is right" in asked[0].ask() and "outside its domain" in asked[1].ask()
    _q, proposal, outcome = answer(ctx, "sign_of", 1, {"sign": 0}, "ada")
    assert outcome.revision == before + 1
    assert proposal.holdout_examples[-1].input == {"n": 0} and proposal.holdout_examples[-1].expected == {"sign": 0}
    _q, proposal, outcome = declare_outside(ctx, "sign_of", 2, "bo")
    assert proposal.outside_domain == [{"n": 1000}] and outcome.revision == before + 2
    assert [q.answered for q in questions(ctx, "sign_of")] == [True, True]
    with pytest.raises(HoldoutError, match="answered already"):
        answer(ctx, "sign_of", 1, {"sign": 0}, "ada")
    with pytest.raises(HoldoutError, match="question 3 does not exist"):
        answer(ctx, "sign_of", 3, {"sign": 0}, "ada")
    with pytest.raises(HoldoutError, match="answered already"):
        declare_outside(ctx, "sign_of", 2, "bo")


def test_the_cli_lists_and_answers(kavi_home: KaviHome) -> None:
    _candidate(kavi_home, "standard", QUESTION, CRASH)
    home = str(kavi_home.root)
    shown = runner.invoke(app, ["questions", "sign_of", "--home", home])
    assert shown.exit_code == 0, shown.output
    assert "2 open question(s)" in shown.output and '{"n": 0}' in shown.output
    assert "kavi answer sign_of N" in shown.output
    bad = runner.invoke(app, ["answer", "sign_of", "1", "--expected", "{not json", "--by", "ada", "--home", home])
    assert bad.exit_code == 2 and "Traceback" not in bad.output and "not valid JSON" in bad.output
    both = runner.invoke(app, ["answer", "sign_of", "1", "--outside", "--expected", "{}", "--by", "ada",
                               "--home", home])
    assert both.exit_code == 2 and "not both or neither" in both.output
    done = runner.invoke(app, ["answer", "sign_of", "1", "--expected", '{"sign": 0}', "--by", "ada", "--home", home])
    assert done.exit_code == 0 and "as holdout 2" in done.output, done.output
    listed = runner.invoke(app, ["questions", "sign_of", "--json", "--home", home])
    assert [q["answered"] for q in json.loads(listed.output)["questions"]] == [True, False]


NOTES = {"a.md": "# Loans\n\nbank loan rates\n", "b.md": "# Lunch\n\nsoup\n"}
VAULT_QUESTION = {"number": 1, "kind": "mutant", "input": {"query": "loan", "limit": 1},
                  "candidate": {"paths": ["a.md"], "count": 1}, "alternatives": [{"paths": [], "count": 0}],
                  "mutants": ["line 70 (bm25): > → >="], "fixtures": {"vault_files": NOTES}}


def _search_notes(home: KaviHome, gates: list[GateResult]) -> None:
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[3] / "kavi" / "examples"
    spec = yaml.safe_load((root / "proposals" / "search_notes.yaml").read_text())
    verified_candidate(home, spec, (root / "answers" / "search_notes" / "1" / "skill.py").read_text(), gates=gates)


def test_an_answer_keeps_the_fixtures_its_input_ran_with(kavi_home: KaviHome) -> None:
    """A question asked of a vault skill ran on the vault files of the example it came from: the person sees them
    named, and the holdout their answer makes runs on the same files (not on an empty vault)."""
    _search_notes(kavi_home, _gates(VAULT_QUESTION))
    ctx = forge_ctx(kavi_home)
    [asked] = open_questions(ctx, "search_notes")
    assert asked.fixtures == {"vault_files": NOTES} and "(with vault files a.md, b.md)" in asked.ask()
    _q, proposal, _outcome = answer(ctx, "search_notes", 1, {"paths": ["a.md"], "count": 1}, "ada")
    added = proposal.holdout_examples[-1]
    assert added.input == {"query": "loan", "limit": 1} and added.vault_files == NOTES
    listed = runner.invoke(app, ["questions", "search_notes", "--json", "--home", str(kavi_home.root)])
    assert json.loads(listed.output)["questions"][0]["fixtures"] == {"vault_files": NOTES}


def test_fixtures_too_large_for_the_report_are_said_not_guessed(kavi_home: KaviHome) -> None:
    _search_notes(kavi_home, _gates({**VAULT_QUESTION, "fixtures": None}))
    ctx = forge_ctx(kavi_home)
    assert "fixtures too large to show" in open_questions(ctx, "search_notes")[0].ask()
    with pytest.raises(HoldoutError, match="fixtures too large"):
        answer(ctx, "search_notes", 1, {"paths": ["a.md"], "count": 1}, "ada")
    # A script reading `kavi questions --json` is told so too (null), not shown a question without fixtures.
    listed = runner.invoke(app, ["questions", "search_notes", "--json", "--home", str(kavi_home.root)])
    assert json.loads(listed.output)["questions"][0]["fixtures"] is None


def test_a_counterexample_holdout_keeps_its_fixtures(kavi_home: KaviHome) -> None:
    from kavi.verdicts import GATE_DIFFERENTIAL

    found = {"kind": "disagreement", "input": {"query": "soup"}, "candidate": {"count": 0},
             "independent": {"count": 1}, "fixtures": {"vault_files": NOTES}}
    gates = [GateResult(g.gate, g.verdict, g.reason, g.duration_s,
                        details={"counterexamples": [found]} if g.gate == GATE_DIFFERENTIAL else g.details)
             for g in _gates()]
    _search_notes(kavi_home, gates)
    out = runner.invoke(app, ["holdout", "add", "search_notes", "--counterexample", "1", "--expected",
                              '{"paths": ["b.md"], "count": 1}', "--by", "ada", "--home", str(kavi_home.root)])
    assert out.exit_code == 0, out.output
    added = forge_ctx(kavi_home).records.require_proposal("search_notes").proposal.holdout_examples[-1]
    assert added.input == {"query": "soup"} and added.vault_files == NOTES


UNIFORM = {"number": 1, "kind": "uniform", "input": {"n": 6}, "candidate": {"sign": 1}, "alternatives": [],
           "mutants": [], "shown": {"sign": 1}, "inputs_tried": 40}


def test_a_question_asking_for_an_input_whose_answer_differs(kavi_home: KaviHome) -> None:
    """The skill answered one thing to every input tried: the person gives an input whose answer differs (--input),
    which answers the question; --input is refused for a question about its own input."""
    spec = {**SIGN_OF_SPEC, "holdout_examples": [{"input": {"n": 12}, "expected": {"sign": 1}}]}
    verified_candidate(kavi_home, spec, sign_of_source("1"), gates=_gates(UNIFORM, {**QUESTION, "number": 2}))
    home = str(kavi_home.root)
    shown = runner.invoke(app, ["questions", "sign_of", "--home", home])
    assert shown.exit_code == 0, shown.output
    assert "for every input tried (40)" in shown.output and "--input JSON --expected JSON" in shown.output
    wrong = runner.invoke(app, ["answer", "sign_of", "2", "--input", '{"n": 3}', "--expected", '{"sign": 1}',
                                "--by", "ada", "--home", home])
    assert wrong.exit_code == 2 and "asks about its own input" in wrong.output and "Traceback" not in wrong.output
    bad = runner.invoke(app, ["answer", "sign_of", "1", "--input", '{"m": 3}', "--expected", '{"sign": -1}',
                              "--by", "ada", "--home", home])
    assert bad.exit_code == 2 and "Traceback" not in bad.output, bad.output
    done = runner.invoke(app, ["answer", "sign_of", "1", "--input", '{"n": -3}', "--expected", '{"sign": -1}',
                               "--by", "ada", "--home", home])
    assert done.exit_code == 0 and "as holdout 2" in done.output, done.output
    listed = json.loads(runner.invoke(app, ["questions", "sign_of", "--json", "--home", home]).output)["questions"]
    assert listed[0]["kind"] == "uniform" and listed[0]["inputs_tried"] == 40 and listed[0]["shown"] == {"sign": 1}
    assert [q["answered"] for q in listed] == [True, False]  # the spec now shows another answer
    ctx = forge_ctx(kavi_home)
    assert ctx.records.require_proposal("sign_of").proposal.holdout_examples[-1].input == {"n": -3}


def test_a_uniform_question_answered_on_its_own_input_with_the_same_answer(kavi_home: KaviHome) -> None:
    spec = {**SIGN_OF_SPEC, "holdout_examples": [{"input": {"n": 12}, "expected": {"sign": 1}}]}
    verified_candidate(kavi_home, spec, sign_of_source("1"), gates=_gates(UNIFORM))
    ctx = forge_ctx(kavi_home)
    assert "or the answer for input {\"n\": 6}" in questions(ctx, "sign_of")[0].ask()
    answer(ctx, "sign_of", 1, {"sign": 1}, "ada")
    assert open_questions(ctx, "sign_of") == []  # its own input is decided now; the next verification asks anew


def test_a_uniform_question_about_an_input_answered_otherwise(kavi_home: KaviHome) -> None:
    spec = {**SIGN_OF_SPEC, "holdout_examples": [{"input": {"n": 12}, "expected": {"sign": 1}}]}
    asked = {**UNIFORM, "input": {"n": -2}, "candidate": {"sign": -1}}
    verified_candidate(kavi_home, spec, sign_of_source(), gates=_gates(asked))
    ctx = forge_ctx(kavi_home)
    [question] = questions(ctx, "sign_of")
    text = question.ask()
    assert 'every example and holdout expects {"sign": 1}' in text and 'the skill returns {"sign": -1}' in text
    answer(ctx, "sign_of", 1, {"sign": -1}, "ada")  # right there: the spec now shows another answer
    assert open_questions(ctx, "sign_of") == []
