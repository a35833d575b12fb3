"""The differential gate, for real (sandboxes and all): a candidate that disagrees with an independent
implementation on a generated input is not trusted and the counterexample reaches the research facts; an honest
one that agrees is; nondeterminism, invalid outputs and undeclared exceptions fail without an oracle; an
independent that fails a holdout is not used and betrays none of it; a hostile independent cannot sway the
verdict; the gate can be switched off; the run is bounded; every shipped demo skill passes."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kavi.gates.acceptance import run_cases
from kavi.gates.differential import EvidenceConfig, output_problem
from kavi.gates.runner import GateConfig, run_gates
from kavi.infrastructure import infrastructure_cause
from kavi.lifecycle import FailureKind, Verdict
from kavi.proposals.model import Proposal
from kavi.research.classifier import AttemptFailure, classify
from kavi.sandbox.runner import Limits
from kavi.verdicts import GATE_DIFFERENTIAL, GateResult
from tests.factories import REPO, warm_mypy_cache_root

ROOT = REPO
ANSWERS = ROOT / "kavi" / "examples" / "answers"
FINAL = {"word_count": "1", "slugify_title": "2", "parse_duration": "3"}  # the recorded answers that pass
SKILL = (ANSWERS / "word_count" / "1" / "skill.py").read_text()
TESTS = (ANSWERS / "word_count" / "1" / "test.py").read_text()
EXECUTE_BODY = "        text = input_data.text\n"


def _proposal(name: str) -> Proposal:
    return Proposal.model_validate(yaml.safe_load((ROOT / "kavi/examples/proposals" / f"{name}.yaml").read_text()))


@pytest.fixture(scope="module")
def word_count() -> Proposal:
    return _proposal("word_count")


def _variant(body: str, *, prelude: str = "") -> str:
    """The honest word_count answer with extra lines at the top of execute (and at module level)."""
    assert EXECUTE_BODY in SKILL
    source = SKILL.replace(EXECUTE_BODY, EXECUTE_BODY + body)
    return source.replace("\nclass WordCountInput", prelude + "\nclass WordCountInput", 1) if prelude else source


def _gates(tmp_path: Path, proposal: Proposal, skill: str, independent: str | None = None,
           evidence: EvidenceConfig | None = None, tests: str = TESTS) -> dict[str, GateResult]:
    name = proposal.name
    files = {f"skills/{name}.py": skill.encode(), f"tests/test_skill_{name}.py": tests.encode()}
    config = GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy"),
                        evidence=evidence or EvidenceConfig())
    out = run_gates(tmp_path / "gates", proposal, files, config,
                    independent=independent.encode() if independent is not None else None,
                    independent_label="recorded-coder-a" if independent is not None else "")
    return {r.gate: r for r in out.results}


def test_a_candidate_that_disagrees_with_the_independent_is_not_trusted(tmp_path: Path, word_count: Proposal) -> None:
    # Passes both examples and both holdouts, but counts surrounding whitespace out of the characters.
    wrong = SKILL.replace("characters=len(text)", "characters=len(text.strip())")
    res = _gates(tmp_path, word_count, wrong, independent=SKILL)
    assert res["acceptance"].ok, res["acceptance"].reason
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.FAILED, diff.reason
    d = diff.details
    assert d["independent"]["used"] and d["independent"]["label"] == "recorded-coder-a"
    assert 0 < d["agreed"] < d["compared"] and d["agreement_rate"] < 1
    assert 1 <= len(d["counterexamples"]) <= 5
    ce = d["counterexamples"][0]
    assert ce["kind"] == "disagreement"
    assert ce["candidate"]["characters"] != ce["independent"]["characters"]
    assert any(json.dumps(ce["input"], ensure_ascii=False, sort_keys=True) in m and "independent implementation" in m
               for m in diff.messages)
    # A behavioural failure: it reaches the research facts (and so the next packet) with its messages.
    assert infrastructure_cause(diff) is None
    others = [r for g, r in res.items() if g != GATE_DIFFERENTIAL and r.ok]
    failure = classify(AttemptFailure("verify", "gates failed", gate_results=[*others, diff]))
    assert failure.kind is FailureKind.VERIFY_ACCEPTANCE
    facts = failure.facts["gates"][GATE_DIFFERENTIAL]
    assert facts["messages"] and facts["counterexamples"] == d["counterexamples"][: len(facts["counterexamples"])]
    assert "differential:disagreement" in failure.key_facts


def test_an_honest_candidate_that_agrees_is_trusted(tmp_path: Path, word_count: Proposal) -> None:
    # A differently written honest implementation as the independent one.
    other = SKILL.replace("words=len(WORD.findall(text))", "words=len(text.split())")
    res = _gates(tmp_path, word_count, SKILL, independent=other)
    assert all(r.ok for r in res.values()), {g: r.reason for g, r in res.items() if not r.ok}
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.PASSED
    assert diff.details["compared"] == diff.details["agreed"] > 0 and diff.details["agreement_rate"] == 1.0
    assert diff.details["generated"] == 40 and diff.details["ran"] == 40
    assert f"{diff.details['compared']} compared, {diff.details['agreed']} agreed (100%)" in diff.reason


def test_a_nondeterministic_candidate_fails_without_an_oracle(tmp_path: Path, word_count: Proposal) -> None:
    # Honest for the four examples, then off by one on every other call.
    flaky = _variant("        _CALLS[0] += 1\n        text = text + (' ' if _CALLS[0] > 4 and _CALLS[0] % 2 else '')\n",
                     prelude="_CALLS = [0]\n\n")
    res = _gates(tmp_path, word_count, flaky)
    assert res["acceptance"].ok
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.FAILED
    assert diff.details["determinism_failures"] > 0
    assert any("different outputs for the same input" in m for m in diff.messages)


def test_an_output_that_breaks_the_schema_fails(tmp_path: Path, word_count: Proposal) -> None:
    bad = SKILL.replace("    characters: int\n", "    characters: int | None\n").replace(
        "characters=len(text)", "characters=len(text) if len(text) < 25 else None")
    res = _gates(tmp_path, word_count, bad)
    assert res["acceptance"].ok
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.FAILED and diff.details["invalid_outputs"] > 0
    assert any("does not match the output schema" in m and "'characters'" in m for m in diff.messages)


def test_an_exception_is_a_counterexample_only_where_the_independent_answered(tmp_path: Path,
                                                                             word_count: Proposal) -> None:
    crash = _variant("        if len(text) > 25:\n"
                     "            return WordCountOutput(words=1 // (len(text) - len(text)), lines=0, characters=0)\n")
    # With an independent implementation that returns a value on the same input: a counterexample.
    res = _gates(tmp_path / "crash", word_count, crash, independent=SKILL)
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.FAILED and diff.details["exceptions"] > 0
    assert any("ZeroDivisionError" in m for m in diff.messages)
    assert any(c["kind"] == "exception" for c in diff.details["counterexamples"])
    # Without one, nothing tells a bug from an input outside the spec's domain: counted and shown, not a failure
    # (counting it refused every honest HumanEval reference, which raise TypeError on a wrong argument count).
    res = _gates(tmp_path / "crash-alone", word_count, crash)
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.PASSED, diff.messages
    assert diff.details["unjudged_exceptions"] > 0 and diff.details["outside_domain"] > 0
    assert not diff.details["counterexamples"]
    declared = _variant("        if len(text) > 25:\n            raise ValueError('texts this long are refused')\n")
    res = _gates(tmp_path / "declared", word_count, declared)
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.PASSED, diff.messages
    assert diff.details["outside_domain"] > 0 and diff.details["unjudged_exceptions"] == 0


def test_only_the_fields_the_spec_pins_must_repeat_and_agree(tmp_path: Path, word_count: Proposal) -> None:
    """An output field no example or holdout gives a value for (here a fresh id per call) is the skill's own:
    neither the determinism check nor the comparison looks at it; the pinned fields still must agree."""
    data = word_count.model_dump(mode="json")
    data["outputs"] = [*data["outputs"], {"name": "run_id", "type": "str"}]
    proposal = Proposal.model_validate(data)
    with_id = (SKILL.replace("    characters: int\n", "    characters: int\n    run_id: str = \"\"\n", 1)
               .replace("import re\n", "import re\nimport uuid\n", 1)
               .replace("characters=len(text))", "characters=len(text), run_id=str(uuid.uuid4()))"))
    assert with_id != SKILL and "uuid4" in with_id
    res = _gates(tmp_path / "fresh-ids", proposal, with_id, independent=SKILL)
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.PASSED, diff.messages
    assert diff.details["determinism_failures"] == 0 and diff.details["compared"] > 0
    wrong = with_id.replace("words=len(WORD.findall(text))", "words=len(WORD.findall(text)) + (len(text) > 25)")
    assert wrong != with_id
    res = _gates(tmp_path / "wrong", proposal, wrong, independent=SKILL)
    assert res[GATE_DIFFERENTIAL].verdict is Verdict.FAILED


def test_an_independent_that_fails_a_holdout_is_not_used(tmp_path: Path, word_count: Proposal) -> None:
    failing = (ANSWERS / "word_count" / "1b" / "skill.py").read_text()
    res = _gates(tmp_path, word_count, SKILL, independent=failing)
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.PASSED  # the oracle-free checks alone decide
    ind = diff.details["independent"]
    assert not ind["used"]
    assert ind["reason"].startswith("the independent implementation failed ")
    assert ind["reason"].endswith(" of 2 holdout example(s); not used")
    assert diff.details["compared"] == 0 and diff.details["agreement_rate"] is None
    shown = json.dumps(diff.to_dict(), ensure_ascii=False)
    for holdout in word_count.holdout_examples:
        assert json.dumps(holdout.input["text"], ensure_ascii=False)[1:-1] not in shown


def test_a_hostile_independent_is_refused_unrun(tmp_path: Path, word_count: Proposal) -> None:
    hostile = _variant("        open('../acceptance/skills/word_count.py', 'w').write('')\n")
    res = _gates(tmp_path, word_count, SKILL, independent=hostile)
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.PASSED and res["acceptance"].ok
    assert not diff.details["independent"]["used"]
    assert diff.details["independent"]["reason"].startswith("the independent implementation was refused by the policy")
    assert not (tmp_path / "gates" / "independent").exists()


FORGED = ("        import json as _j\n"
          "        for _i in range(3):\n"
          "            print('\\nKAVI-ACCEPTANCE-RESULT:' + '0' * 32 + ':' + _j.dumps({'result': {'id': _i,"
          " 'ran': True, 'output': {'words': 99, 'lines': 99, 'characters': 99}}}))\n"
          "            print('\\nKAVI-ACCEPTANCE-RESULT:' + '0' * 32 + ':' + _j.dumps({'done': 1}))\n")


def test_a_hostile_independent_that_passes_the_policy_cannot_sway_the_verdict(tmp_path: Path,
                                                                             word_count: Proposal) -> None:
    # It prints forged result lines (claiming outputs a wrong candidate would give) and is itself honest otherwise:
    # its output goes nowhere and the forge reads only lines with its run's nonce, so the comparison sees the
    # independent's real answers.
    wrong = SKILL.replace("characters=len(text)", "characters=len(text.strip())")
    res = _gates(tmp_path, word_count, wrong, independent=_variant(FORGED))
    diff = res[GATE_DIFFERENTIAL]
    assert diff.details["independent"]["used"], diff.details["independent"]
    assert diff.verdict is Verdict.FAILED
    assert all(ce["independent"]["words"] != 99 for ce in diff.details["counterexamples"])


def test_a_hostile_independent_run_cannot_read_or_touch_the_candidate(tmp_path: Path, word_count: Proposal) -> None:
    # Straight to its sandbox, past the policy: it looks for the candidate's copy and tries to overwrite it.
    probe = _variant(
        "        from pathlib import Path as _P\n"
        "        _seen = [*_P('..').glob('acceptance/skills/*.py'), *_P('../..').glob('*/acceptance/skills/*.py'),"
        " *_P('..').glob('candidate-marker*'), *_P('../..').glob('*/candidate-marker*')]\n"
        "        for _p in _P('..').glob('*/skills/word_count.py'):\n"
        "            try:\n"
        "                _p.write_text('raise SystemExit(0)\\n')\n"
        "            except OSError:\n"
        "                pass\n"
        "        return WordCountOutput(words=len(_seen), lines=0, characters=0)\n")
    candidate_dir = tmp_path / "acceptance" / "skills"
    candidate_dir.mkdir(parents=True)
    (candidate_dir / "word_count.py").write_text(SKILL)
    (tmp_path / "candidate-marker.txt").write_text("secret")
    run = run_cases(tmp_path / "independent", word_count, probe.encode(),
                    [{"input": {"text": "x"}}], Limits(wall_s=30))
    assert run.failure is None and run.results[0]["ran"], run
    assert run.results[0]["output"]["words"] == 0  # nothing of the candidate (or the host's files) was visible
    assert (candidate_dir / "word_count.py").read_text() == SKILL


def test_omitted_with_the_reason_when_switched_off(tmp_path: Path, word_count: Proposal) -> None:
    off = EvidenceConfig(enabled=False, skipped_reason="switched off at the 'quick' ceremony level")
    res = _gates(tmp_path, word_count, SKILL, independent=SKILL, evidence=off)
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.OMITTED and diff.ok
    assert diff.reason == "switched off at the 'quick' ceremony level"
    assert not (tmp_path / "gates" / "independent").exists()


def test_the_run_is_bounded_by_the_time_budget(tmp_path: Path, word_count: Proposal) -> None:
    # Slow on every input beyond the examples' sizes, and endless on long ones: the budget stops the generated
    # inputs, acceptance still judges every example, and the gate reports what it finished.
    slow = _variant("        _n = 0\n"
                    "        while len(text) > 2 and (_n < 3_000_000 or len(text) > 30):\n"
                    "            _n += 1\n")
    budget = 2.0
    res = _gates(tmp_path, word_count, slow, evidence=EvidenceConfig(time_budget_s=budget, max_cases=40))
    # Acceptance passing says the endless inputs were stopped by the budget, not by the sandbox's wall timeout.
    assert res["acceptance"].ok, res["acceptance"].reason
    diff = res[GATE_DIFFERENTIAL]
    assert diff.details["budget_exhausted"] is True
    assert diff.details["ran"] < diff.details["generated"] == 40
    assert "the time budget stopped the run" in diff.reason



def test_a_candidate_stuck_where_the_independent_answers_at_once_is_not_trusted(tmp_path: Path,
                                                                                word_count: Proposal) -> None:
    # Right on every example and holdout, endless on longer texts (a wrong loop bound, say): the budget stops it on
    # a generated input the independent implementation answered in milliseconds. That input is a counterexample.
    stuck = _variant("        while len(text) > 30:\n            pass\n")
    res = _gates(tmp_path / "stuck", word_count, stuck, independent=SKILL,
                 evidence=EvidenceConfig(time_budget_s=4.0, max_cases=40))
    assert res["acceptance"].ok, res["acceptance"].reason
    diff = res[GATE_DIFFERENTIAL]
    assert diff.verdict is Verdict.FAILED, diff.reason
    ce = diff.details["counterexamples"][0]
    assert ce["kind"] == "too_slow" and len(ce["input"]["text"]) > 30 and ce["independent"]["characters"] > 30
    assert any("did not finish" in m and "independent implementation" in m for m in diff.messages)
    # Without an independent implementation, an input stopped by the time (its own cap, or the budget's end) is no
    # verdict on its own: the input may simply be hard.
    alone = _gates(tmp_path / "alone", word_count, stuck, evidence=EvidenceConfig(time_budget_s=4.0, max_cases=40))
    assert alone[GATE_DIFFERENTIAL].verdict is Verdict.PASSED
    d = alone[GATE_DIFFERENTIAL].details
    assert d["budget_exhausted"] or d["cut_at_cap"] >= 1, d

def test_an_input_cut_at_its_cap_does_not_spend_the_budget_or_hide_the_inputs_after_it(
        tmp_path: Path, word_count: Proposal) -> None:
    """In the sandbox: each case under the budget gets at most `case_cap_s`; a case cut there is reported as such
    (not as the budget's end), its second run is not made, and the cases after it still run."""
    stuck = _variant("        while len(text) > 30:\n            pass\n")
    examples = [ex.model_dump(mode="json") for ex in word_count.examples]
    long, short = {"input": {"text": "x" * 40}}, {"input": {"text": "a b"}}
    run = run_cases(tmp_path / "capped", word_count, stuck.encode(), [*examples, long, long, short, short],
                    Limits(wall_s=60), must_run=len(examples), budget_s=20.0, case_cap_s=1.0, paired=True)
    n = len(examples)
    assert run.results[n]["error_kind"] == "cap" and "time cap (1 s)" in run.results[n]["error"]
    assert n + 1 not in run.results  # the cut case's second run was not made
    # The budget was not spent: the cases after the cut one ran, and the runner finished its list.
    assert run.results[n + 2]["ran"] and run.results[n + 3]["ran"]
    assert run.done and not run.timed_out
    assert not any(r.get("error_kind") == "budget" for r in run.results.values())


def test_a_cut_input_is_too_slow_beside_a_fast_independent_and_the_rest_is_still_judged(
        word_count: Proposal) -> None:
    """The differential gate on a run whose first generated input was cut at its cap: beside an independent answer
    in milliseconds it is a too-slow counterexample; where the independent was cut too it is undecided; either way the
    inputs after it are compared (here the second disagrees)."""
    from kavi.gates.acceptance import CaseRun
    from kavi.gates.differential import GENERATED_CASE_CAP_S, IndependentEvidence, differential_gate

    base = len(word_count.examples) + len(word_count.holdout_examples)
    generated = [{"input": {"text": "x" * 40}}, {"input": {"text": "a b"}}]
    results = {i: {"ran": True, "output": {"words": 1, "lines": 1, "characters": 1}} for i in range(base)}
    results[base] = {"ran": False, "error_kind": "cap", "ms": GENERATED_CASE_CAP_S * 1000}
    results[base + 2] = results[base + 3] = {"ran": True, "output": {"words": 2, "lines": 1, "characters": 4}}
    candidate = CaseRun(results, True, False, None, {}, 1.0)
    right = {"words": 2, "lines": 1, "characters": 3}

    def judged(first: dict[str, Any]) -> GateResult:
        indep = IndependentEvidence("0" * 64, "model-b", True, "", {0: first, 1: {"ran": True, "output": right,
                                                                                "ms": 1.0}})
        return differential_gate(word_count, EvidenceConfig(), generated, candidate, indep, seed=1)

    fast = judged({"ran": True, "output": {"words": 1, "lines": 1, "characters": 40}, "ms": 2.0})
    assert fast.verdict is Verdict.FAILED and fast.details["too_slow"] == 1 and fast.details["cut_at_cap"] == 1
    assert [c["kind"] for c in fast.details["counterexamples"]] == ["too_slow", "disagreement"]
    assert not fast.details["budget_exhausted"] and f"1 cut at {GENERATED_CASE_CAP_S:g} s" in fast.reason
    both = judged({"ran": False, "error_kind": "cap", "ms": GENERATED_CASE_CAP_S * 1000})
    assert [c["kind"] for c in both.details["counterexamples"]] == ["disagreement"] and both.details["too_slow"] == 0


def _demo_files(name: str) -> tuple[Proposal, dict[str, bytes]]:
    answer = ANSWERS / name / FINAL.get(name, "1")
    return _proposal(name), {f"skills/{name}.py": (answer / "skill.py").read_bytes(),
                             f"tests/test_skill_{name}.py": (answer / "test.py").read_bytes()}


# A demo proposal the forge decomposes has no single build: its children (kavi/examples/answers/<child>/) are
# the skills.
DECOMPOSED_IN_THE_DEMO = {"email_domain_report"}


def test_only_the_decomposed_demo_proposal_has_no_single_build() -> None:
    names = {p.stem for p in (ROOT / "kavi" / "examples" / "proposals").glob("*.yaml")}
    without = {n for n in names if not (ANSWERS / n / FINAL.get(n, "1") / "skill.py").is_file()}
    assert without == DECOMPOSED_IN_THE_DEMO


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "kavi" / "examples" / "proposals").glob("*.yaml")
                                        if p.stem not in DECOMPOSED_IN_THE_DEMO))
def test_every_demo_skill_passes_with_and_without_an_independent(tmp_path: Path, name: str) -> None:
    proposal, files = _demo_files(name)
    skill = files[f"skills/{name}.py"].decode()
    for label, independent in (("alone", None), ("with", skill)):
        res = _gates(tmp_path / label, proposal, skill, independent=independent,
                     tests=files[f"tests/test_skill_{name}.py"].decode())
        failed: dict[str, Any] = {g: (r.reason, r.messages[:3]) for g, r in res.items() if not r.ok}
        assert not failed, (label, failed)
        diff = res[GATE_DIFFERENTIAL]
        assert diff.verdict is Verdict.PASSED and diff.details["ran"] == diff.details["generated"] > 0
        if independent is not None:
            assert diff.details["independent"]["used"]


# --- the output-schema check, rule by rule against the contract (FieldSpec) -----------------------------------------


def _outputs(*fields: dict[str, Any]) -> Proposal:
    return Proposal.model_validate({
        "name": "schema_probe", "description": "Only the output fields matter here.", "side_effect_class": "READ_ONLY",
        "inputs": [{"name": "x", "type": "int"}], "outputs": list(fields),
        "examples": [{"input": {"x": 1}, "expected": {}}]})


@pytest.mark.parametrize(("ftype", "value"), [
    ("json", None), ("json", 0), ("json", "text"), ("json", [1, None, {"a": []}]), ("json", {"k": None}),
    ("json", True), ("int", 3), ("int", -7), ("float", 2.5), ("float", 3), ("bool", False), ("str", ""),
    ("int | None", None), ("str | None", "x"), ("list[int]", []), ("list[int]", [1, 2]), ("list[float]", [1, 2.5]),
    ("list[json]", [None, "a", [1]]), ("dict[str, json]", {"a": None}), ("dict[str, int]", {"a": 1}),
    ("list[str] | None", None), ("dict[str, bool]", {}),
])
def test_output_values_the_contract_allows(ftype: str, value: Any) -> None:
    assert output_problem(_outputs({"name": "result", "type": ftype}), {"result": value}) is None


@pytest.mark.parametrize(("ftype", "value", "why"), [
    ("int", None, "null"), ("int", True, "not int"), ("int", 2.5, "not int"), ("int", 3.0, "not int"),
    ("float", True, "not float"), ("float", "1.5", "not float"), ("bool", 1, "not bool"), ("str", 1, "not str"),
    ("float", float("nan"), "not float"), ("float", float("inf"), "not float"), ("json", float("nan"), "not json"),
    ("json", [1, float("inf")], "not json"), ("list[int]", [1, None], "not list[int]"),
    ("list[int]", [True], "not list[int]"), ("list[int]", {"a": 1}, "not list[int]"),
    ("dict[str, int]", {"a": "1"}, "not dict[str, int]"), ("dict[str, str]", ["a"], "not dict[str, str]"),
    ("list[str] | None", ["a", 1], "not list[str] | None"), ("str | None", 5, "not str | None"),
])
def test_output_values_the_contract_refuses(ftype: str, value: Any, why: str) -> None:
    problem = output_problem(_outputs({"name": "result", "type": ftype}), {"result": value})
    assert problem is not None and "'result'" in problem and why in problem, problem


def test_output_fields_required_optional_and_extra() -> None:
    proposal = _outputs({"name": "a", "type": "int"}, {"name": "b", "type": "str", "required": False},
                        {"name": "c", "type": "str | None"})
    assert output_problem(proposal, {"a": 1, "b": "x", "c": None}) is None
    # A field that is not required may be left out or dumped as null (how a pydantic default of None dumps); a
    # `| None` field may be left out like an example's input may leave it out.
    assert output_problem(proposal, {"a": 1}) is None
    assert output_problem(proposal, {"a": 1, "b": None}) is None
    # Extra fields are the skill's own business: only the declared ones are compared.
    assert output_problem(proposal, {"a": 1, "debug": [1, 2]}) is None
    assert "required field 'a' is missing" in (output_problem(proposal, {"b": "x"}) or "")
    assert "'b'" in (output_problem(proposal, {"a": 1, "b": 2}) or "")
    assert "not an object" in (output_problem(proposal, [1]) or "")


def test_a_counterexample_carries_the_fixtures_its_input_ran_with() -> None:
    """A generated input of a vault skill ran on its example's vault files: the counterexample keeps them, so the
    holdout `kavi holdout add --counterexample N` makes of it runs on them too."""
    from pathlib import Path

    import yaml

    from kavi.gates.acceptance import CaseRun
    from kavi.gates.differential import EvidenceConfig, IndependentEvidence, differential_gate
    from kavi.lifecycle import Verdict
    from kavi.proposals.model import parse_proposal

    root = Path(__file__).resolve().parents[3] / "kavi" / "examples"
    proposal = parse_proposal(yaml.safe_load((root / "proposals" / "search_notes.yaml").read_text()),
                              "search_notes")
    vault = dict(proposal.examples[0].vault_files)
    generated = [{"input": {"query": "loan"}, "vault_files": vault, "http_responses": {}, "secrets": {}}]
    base = len(proposal.examples) + len(proposal.holdout_examples)
    mine = {"ran": True, "output": {"paths": ["notes/bank.md"], "count": 1, "method": "lexical", "results": []}}
    theirs = {"ran": True, "output": {"paths": ["notes/money.md"], "count": 1, "method": "lexical", "results": []}}
    candidate = CaseRun(results={base: mine, base + 1: mine}, done=True, timed_out=False, failure=None, details={},
                        duration_s=0.1)
    independent = IndependentEvidence("0" * 64, "second model", True, "", {0: theirs})
    result = differential_gate(proposal, EvidenceConfig(), generated, candidate, independent, seed=1)
    assert result.verdict is Verdict.FAILED
    [found] = result.details["counterexamples"]
    assert found["input"] == {"query": "loan"} and found["fixtures"] == {"vault_files": vault}
