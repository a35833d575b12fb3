"""The mutation analysis of the evidence, for real (the gate sandbox, the skill's mutants, the independent's run): a
wrong skill the examples cannot refute raises the question that exposes it; the independent implementation answers
a question before any person and refutes a candidate it sides against; an honest skill with an honest independent
leaves no question; a skill that raises on a probe asks whether that input is its to answer; the plan of mutants is
deterministic and compiles; the probes never come from a holdout."""

import ast
import types
from pathlib import Path

import pytest

from kavi.gates.adequacy import AdequacyConfig, plan_adequacy, probe_inputs
from kavi.gates.differential import EvidenceConfig
from kavi.gates.mutants import MutantMaker, choose, mutant_code, plan_mutants
from kavi.gates.runner import GateConfig, run_gates
from kavi.lifecycle import FailureKind, Verdict
from kavi.proposals.model import Proposal, parse_proposal
from kavi.research.classifier import AttemptFailure, classify
from kavi.verdicts import GATE_ADEQUACY, GateResult
from tests.factories import SIGN_OF_SPEC, SIGN_OF_TESTS, sign_of_source, warm_mypy_cache_root

HONEST = sign_of_source("1 if n > 0 else (-1 if n < 0 else 0)")
INDEPENDENT = sign_of_source("(n > 0) - (n < 0)")
# Right on the example (5) and the holdout (-7), wrong at zero: a plausible wrong skill the evidence cannot refute.
WRONG_AT_ZERO = sign_of_source("1 if n >= 0 else -1")
# Wrong at 1000 only, far from every example and generated input; its mutant `1000 → 1001` answers 1 there, as an
# honest independent does.
WRONG_AT_1000 = sign_of_source("0 if n in (0, 1000) else (1 if n > 0 else -1)")
TESTS = SIGN_OF_TESTS


@pytest.fixture(scope="module")
def sign_of() -> Proposal:
    return parse_proposal(SIGN_OF_SPEC)


def _gates(tmp_path: Path, proposal: Proposal, skill: str, independent: str | None = None,
           tests: str = TESTS) -> dict[str, GateResult]:
    files = {f"skills/{proposal.name}.py": skill.encode(), f"tests/test_skill_{proposal.name}.py": tests.encode()}
    config = GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy"))
    out = run_gates(tmp_path / "gates", proposal, files, config,
                    independent=independent.encode() if independent is not None else None,
                    independent_label="recorded-coder-b" if independent is not None else "")
    return {r.gate: r for r in out.results}


def test_a_wrong_skill_the_examples_cannot_refute_raises_the_question_that_exposes_it(
        tmp_path: Path, sign_of: Proposal) -> None:
    res = _gates(tmp_path, sign_of, WRONG_AT_ZERO)
    assert all(r.ok for r in res.values()), {g: r.reason for g, r in res.items() if not r.ok}
    adequacy = res[GATE_ADEQUACY]
    assert adequacy.verdict is Verdict.PASSED, adequacy.reason
    d = adequacy.details
    assert d["tried"] > 0 and d["tried"] == d["killed"] + d["surviving"] + d["equivalent"] + d["not_finished"]
    assert d["surviving"] >= 1 and "open question" in adequacy.reason
    # The question at zero, shrunk to it: the skill says 1, a variant that passes everything says something else.
    zero = [q for q in d["questions"] if q["input"] == {"n": 0}]
    assert zero, d["questions"]
    assert zero[0]["kind"] == "mutant" and zero[0]["candidate"] == {"sign": 1}
    assert zero[0]["alternatives"] and all(a != {"sign": 1} for a in zero[0]["alternatives"])
    assert zero[0]["mutants"] and "line" in zero[0]["mutants"][0]
    assert len(d["questions"]) <= AdequacyConfig().max_questions


def test_the_independent_refutes_a_candidate_where_it_sides_with_a_mutant(tmp_path: Path, sign_of: Proposal) -> None:
    res = _gates(tmp_path, sign_of, WRONG_AT_1000, independent=INDEPENDENT)
    adequacy = res[GATE_ADEQUACY]
    assert adequacy.verdict is Verdict.FAILED, adequacy.reason
    assert res["differential"].ok, res["differential"].reason  # the generated inputs never reach 1000
    assert any('{"n": 1000}' in m and "independent implementation" in m and "variant of your skill" in m
               for m in adequacy.messages), adequacy.messages
    assert adequacy.details["counterexamples"][0]["independent"] == {"sign": 1}
    # A behavioural failure: retried with the counterexample, like the differential gate's.
    kind = classify(AttemptFailure("verify", "gates failed", gate_results=list(res.values()))).kind
    assert kind is FailureKind.VERIFY_ACCEPTANCE


def test_the_independent_answers_first_and_an_honest_skill_leaves_no_question(tmp_path: Path,
                                                                               sign_of: Proposal) -> None:
    res = _gates(tmp_path, sign_of, HONEST, independent=INDEPENDENT)
    adequacy = res[GATE_ADEQUACY]
    assert adequacy.verdict is Verdict.PASSED, adequacy.reason
    assert adequacy.details["questions"] == []
    assert adequacy.details["settled_by_independent"] >= 1
    # Without a second opinion the same honest skill asks the person what the examples leave open, zero first.
    alone = _gates(tmp_path / "alone", sign_of, HONEST)[GATE_ADEQUACY]
    assert alone.verdict is Verdict.PASSED
    assert "one_answer" not in alone.details  # its answers differ: no question about answering one thing always
    assert alone.details["questions"][0]["input"] == {"n": 0}
    assert alone.details["questions"][0]["candidate"] == {"sign": 0}


LAST_SPEC = {
    "name": "last_item", "side_effect_class": "READ_ONLY",
    "description": "Return the last item of a list of integers.",
    "inputs": [{"name": "items", "type": "list[int]"}], "outputs": [{"name": "item", "type": "int"}],
    "examples": [{"input": {"items": [4, 5, 6, 7, 8, 9, 10, 11, 12]}, "expected": {"item": 12}},
                 {"input": {"items": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}, "expected": {"item": 10}}],
}
LAST_SOURCE = '''"""The last item."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class LastItemInput(BaseModel):
    items: list[int]


class LastItemOutput(BaseModel):
    item: int


class LastItem(BaseSkill[LastItemInput, LastItemOutput]):
    name = "last_item"
    description = "Return the last item of a list."
    input_model = LastItemInput
    output_model = LastItemOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: LastItemInput) -> LastItemOutput:
        items = input_data.items
        if items[8] < 0:
            return LastItemOutput(item=0)
        return LastItemOutput(item=items[-1])
'''
LAST_TESTS = '''from skills.last_item import LastItem, LastItemInput


def test_last() -> None:
    assert LastItem().execute(LastItemInput(items=[4, 5, 6, 7, 8, 9, 10, 11, 12])).item == 12


def test_negative_ninth() -> None:
    assert LastItem().execute(LastItemInput(items=[1, 1, 1, 1, 1, 1, 1, 1, -1])).item == 0
'''


def test_a_skill_that_raises_on_a_probe_asks_whether_the_input_is_its_to_answer(tmp_path: Path) -> None:
    proposal = parse_proposal(LAST_SPEC)
    res = _gates(tmp_path, proposal, LAST_SOURCE, tests=LAST_TESTS)
    adequacy = res[GATE_ADEQUACY]
    assert adequacy.verdict is Verdict.PASSED, adequacy.reason
    crash = [q for q in adequacy.details["questions"] if q["kind"] == "crash"]
    assert crash and "IndexError" in crash[0]["candidate"]
    assert len(crash[0]["input"]["items"]) < 9


def test_the_plan_is_deterministic_and_every_mutant_compiles() -> None:
    plan = plan_mutants(WRONG_AT_1000)
    assert plan == plan_mutants(WRONG_AT_1000)
    assert {m.operator for m in plan} >= {"comparison", "constant", "branch"}
    for m in plan:
        qualname, code = mutant_code(WRONG_AT_1000, m.index, "<skill>")
        assert qualname == "SignOf.execute" and code.co_filename == "<skill>"
    # Spread over the operators when capped.
    few = choose(plan, 4)
    assert len(few) == 4 and len({m.operator for m in few}) == 4


def test_one_maker_makes_each_mutant_as_if_alone() -> None:
    """A maker reuses the sites it found, never a tree a previous mutant changed: every mutant's code is the same
    whatever was made before it, and none is the unmutated function."""
    maker = MutantMaker(WRONG_AT_1000, "<skill>")
    assert len(maker) == len(plan_mutants(WRONG_AT_1000))
    alone = [_shape(MutantMaker(WRONG_AT_1000, "<skill>").code(i)[1]) for i in range(len(maker))]
    assert [_shape(maker.code(i)[1]) for i in reversed(range(len(maker)))] == alone[::-1]
    tree = ast.parse(WRONG_AT_1000)
    execute = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "execute")
    unmutated = _shape(compile(ast.Module(body=[execute], type_ignores=[]), "<skill>", "exec"))
    assert unmutated not in alone
    with pytest.raises(IndexError):
        maker.code(len(maker))


def _shape(code: types.CodeType) -> tuple[object, ...]:
    """What a code object does, nested code included (not its identity: two compilations of one tree are equal)."""
    consts = tuple(_shape(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.co_code, consts, code.co_names, code.co_varnames, code.co_firstlineno


def test_functions_a_mutant_cannot_move_are_left_alone() -> None:
    source = '''
import functools


class A:
    def uses_super(self) -> int:
        return super().__hash__() + 1

    def mangled(self) -> int:
        return self.__secret + 1

    @functools.cache
    def cached(self) -> int:
        return 1 + 1

    @staticmethod
    def plain(x: int) -> bool:
        return x > 1
'''
    plan = plan_mutants(source)
    assert plan and {m.function for m in plan} == {"A.plain"}
    ast.parse(source)


def test_probes_come_from_the_shown_examples_only(sign_of: Proposal) -> None:
    probes = probe_inputs(sign_of, WRONG_AT_1000, [], 100)
    inputs = [p["input"] for p in probes]
    assert {"n": 1000} in inputs and {"n": 999} in inputs and {"n": 1001} in inputs  # the code's constants, and next
    assert {"n": 5} not in inputs and {"n": -7} not in inputs  # the example's and the holdout's own
    assert len(inputs) == len({str(sorted(i.items())) for i in inputs})
    # An input a person declared outside the domain is not asked again.
    outside = parse_proposal({**SIGN_OF_SPEC, "outside_domain": [{"n": 0}]})
    assert {"n": 0} not in [p["input"] for p in probe_inputs(outside, WRONG_AT_1000, [], 100)]


def test_a_list_shown_at_one_length_keeps_it() -> None:
    spec = {"name": "pair_sum", "side_effect_class": "READ_ONLY", "description": "Add the two numbers of a pair.",
            "inputs": [{"name": "args", "type": "list[json]"}], "outputs": [{"name": "result", "type": "json"}],
            "examples": [{"input": {"args": [1, 2]}, "expected": {"result": 3}},
                         {"input": {"args": [5, 7]}, "expected": {"result": 12}}]}
    probes = probe_inputs(parse_proposal(spec), "def f(a: int) -> int:\n    return a + 3\n", [], 200)
    assert probes and all(len(p["input"]["args"]) == 2 for p in probes)


def test_off_at_the_ceremony_levels_without_evidence(sign_of: Proposal) -> None:
    plan = plan_adequacy(sign_of, HONEST, [], AdequacyConfig(enabled=False, skipped_reason="ceremony low"))
    assert plan.section is None and plan.note == "ceremony low"
    off = plan_adequacy(sign_of, HONEST, [], AdequacyConfig(max_mutants=0))
    assert off.section is None


def test_off_when_the_evidence_is_off(tmp_path: Path, sign_of: Proposal) -> None:
    files = {"skills/sign_of.py": HONEST.encode(), "tests/test_skill_sign_of.py": TESTS.encode()}
    config = GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy"),
                        evidence=EvidenceConfig(enabled=False, skipped_reason="ceremony low: evidence off"))
    out = run_gates(tmp_path / "gates", sign_of, files, config)
    adequacy = {r.gate: r for r in out.results}[GATE_ADEQUACY]
    assert adequacy.verdict is Verdict.OMITTED and "ceremony low" in adequacy.reason and adequacy.ok


def test_a_question_carries_the_fixtures_its_input_ran_with() -> None:
    """A probe of a vault skill keeps its example's vault files; the question made of it (and a counterexample the
    independent implementation makes of it) carries them, so the holdout a person's answer becomes runs on them."""
    import yaml

    from kavi.gates.adequacy import adequacy_gate

    root = Path(__file__).resolve().parents[3] / "kavi" / "examples"
    proposal = parse_proposal(yaml.safe_load((root / "proposals" / "search_notes.yaml").read_text()),
                              "search_notes")
    source = (root / "answers" / "search_notes" / "1" / "skill.py").read_text()
    plan = plan_adequacy(proposal, source, [], AdequacyConfig())
    assert plan.probes and all(p["vault_files"] == proposal.examples[0].vault_files for p in plan.probes)
    first, second = plan.mutants[:2]
    probe = plan.probes[0]
    line = {"status": "distinguished", "differs_on": 1,
            "distinguishing": [{"key": "p0", "candidate": {"count": 1}, "mutant": {"count": 2}}]}
    lines = [{**line, "mutant": first.index}, {**line, "mutant": second.index}]
    done = {"tried": 2, "cut": "", "crashes": []}
    asked = adequacy_gate(proposal, AdequacyConfig(), plan, lines, done, [], None, others_passed=True)
    [question] = asked.details["questions"]
    assert question["input"] == probe["input"]
    assert question["fixtures"] == {"vault_files": proposal.examples[0].vault_files}
    # The independent implementation sides with the mutant there: the counterexample carries them too.
    refuted = adequacy_gate(proposal, AdequacyConfig(), plan, lines, done, [],
                            {"p0": {"ran": True, "output": {"count": 2}}}, others_passed=True)
    assert refuted.verdict is Verdict.FAILED
    assert refuted.details["counterexamples"][0]["fixtures"] == {"vault_files": proposal.examples[0].vault_files}


# Every shown case expects 1: a skill that always answers 1 passes them all, and no variant of it can reach an input
# where the answer differs (each variant that changes the constant fails the example).
ONE_ANSWER_SPEC = {**SIGN_OF_SPEC, "holdout_examples": [{"input": {"n": 12}, "expected": {"sign": 1}}]}
ALWAYS_ONE = sign_of_source("1 + 0 * n")
ALWAYS_ONE_TESTS = """from skills.sign_of import SignOf, SignOfInput


def test_positive() -> None:
    assert SignOf().execute(SignOfInput(n=5)).sign == 1
"""


def test_one_answer_to_every_input_asks_for_an_input_whose_answer_differs(tmp_path: Path) -> None:
    proposal = parse_proposal(ONE_ANSWER_SPEC)
    res = _gates(tmp_path, proposal, ALWAYS_ONE, tests=ALWAYS_ONE_TESTS)
    adequacy = res[GATE_ADEQUACY]
    assert adequacy.verdict is Verdict.PASSED, adequacy.reason
    d = adequacy.details
    # Asked first, above any variant's question: the examples, the holdout, the probes and the generated inputs all
    # got {"sign": 1}.
    first = d["questions"][0]
    assert first["kind"] == "uniform" and first["candidate"] == {"sign": 1} and first["alternatives"] == []
    assert first["inputs_tried"] == d["one_answer"]["inputs"] > 10
    assert isinstance(first["input"], dict) and first["input"] not in ({"n": 5}, {"n": 12})  # a probe to answer


def _one_answer_gate(indep: dict[str, dict[str, object]] | None, **found: object) -> GateResult:
    from kavi.gates.adequacy import adequacy_gate

    proposal = parse_proposal(ONE_ANSWER_SPEC)
    plan = plan_adequacy(proposal, ALWAYS_ONE, [], AdequacyConfig())
    one = {"answer": {"sign": 1}, "inputs": 30, "judged": 2, "constant": True, **found}
    done = {"tried": 0, "cut": "", "crashes": [], "one_answer": one}
    return adequacy_gate(proposal, AdequacyConfig(), plan, [], done, [], indep, others_passed=True)


def test_the_independent_answers_the_one_answer_question_first() -> None:
    plan = plan_adequacy(parse_proposal(ONE_ANSWER_SPEC), ALWAYS_ONE, [], AdequacyConfig())
    # It agrees on every probe it ran: settled, no question.
    agreeing = _one_answer_gate({f"p{i}": {"ran": True, "output": {"sign": 1}} for i in range(3)})
    assert agreeing.details["questions"] == [] and agreeing.details["settled_by_independent"] == 1
    # It answers otherwise on one: that input is the question, with its answer beside the skill's.
    parting = _one_answer_gate({"p0": {"ran": True, "output": {"sign": 1}}, "p1": {"ran": True, "output": {"sign": 0}}})
    [question] = parting.details["questions"]
    assert question["kind"] == "uniform" and question["input"] == plan.probes[1]["input"]
    assert question["alternatives"] == [{"sign": 0}] and parting.verdict is Verdict.PASSED
    # None: a person is asked, on the probe nearest the examples.
    alone = _one_answer_gate(None)
    assert alone.details["questions"][0]["input"] == plan.probes[0]["input"]
    assert alone.details["one_answer"] == {"answer": {"sign": 1}, "inputs": 30, "constant": True}


def test_two_shown_cases_with_one_answer_ask_even_when_the_skill_answers_otherwise_elsewhere() -> None:
    """Both shown cases expect 1, and the skill answered -1 on one probe: the evidence still cannot tell it from a
    skill that answers 1 almost everywhere. The question is that probe (is -1 right there?), unless the independent
    implementation answers it: agreeing settles it, disagreeing puts both answers to the person."""
    plan = plan_adequacy(parse_proposal(ONE_ANSWER_SPEC), ALWAYS_ONE, [], AdequacyConfig())
    other = {"key": "p2", "output": {"sign": -1}}
    [question] = _one_answer_gate(None, constant=False, other=other).details["questions"]
    assert question["input"] == plan.probes[2]["input"] and question["candidate"] == {"sign": -1}
    assert question["shown"] == {"sign": 1} and question["alternatives"] == []
    confirmed = _one_answer_gate({"p2": {"ran": True, "output": {"sign": -1}}}, constant=False, other=other)
    assert confirmed.details["questions"] == [] and confirmed.details["settled_by_independent"] == 1
    [doubted] = _one_answer_gate({"p2": {"ran": True, "output": {"sign": 1}}}, constant=False,
                                 other=other).details["questions"]
    assert doubted["candidate"] == {"sign": -1} and doubted["alternatives"] == [{"sign": 1}]
    # One shown case alone, and the skill answers otherwise elsewhere: nothing to ask.
    assert _one_answer_gate(None, constant=False, other=other, judged=1).details["questions"] == []


def test_a_probe_the_candidate_cannot_finish_is_tried_longer_and_reported() -> None:
    """In the sandbox: a probe that runs out of the call's cap is tried once more with `slow_cap_s` (set when an
    independent implementation runs); one it cannot finish even then is reported as slow. Without `slow_cap_s`
    nothing is retried."""
    from kavi.gates.adequacy_runner import run_adequacy

    calls: list[tuple[int, float]] = []

    def call(case: dict[str, object], cap_s: float) -> dict[str, object]:
        n = int(case["input"]["n"])  # type: ignore[index]
        calls.append((n, cap_s))
        if n >= 10:
            return {"ran": False, "error_kind": "timeout", "error": "stopped: the call's time cap"}
        return {"ran": True, "output": {"sign": 1}}

    job = {"cases": [{"input": {"n": 5}}], "adequacy": {
        "mutants": [], "pinned": ["sign"], "judged": 1, "shown_expected": [{"sign": 1}],
        "probes": [{"input": {"n": 6}}, {"input": {"n": 10}}, {"input": {"n": 11}}, {"input": {"n": 12}}],
        "budget_s": 30.0, "call_cap_s": 0.25, "slow_cap_s": 1.0}}
    lines: list[dict[str, object]] = []
    run_adequacy(call, {}, "x = 1\n", "<skill>", job, {0: {"ran": True, "output": {"sign": 1}}}, lines.append)
    done = lines[-1]["adequacy_done"]
    assert done["slow"] == [{"key": "p1", "s": 1.0}, {"key": "p2", "s": 1.0}]  # at most two tried longer
    assert (10, 1.0) in calls and (12, 1.0) not in calls
    calls.clear()
    del job["adequacy"]["slow_cap_s"]  # type: ignore[attr-defined]
    lines.clear()
    run_adequacy(call, {}, "x = 1\n", "<skill>", job, {0: {"ran": True, "output": {"sign": 1}}}, lines.append)
    assert "slow" not in lines[-1]["adequacy_done"] and all(cap == 0.25 for _n, cap in calls)


def test_a_probe_too_slow_where_the_independent_answers_fast_refutes_the_candidate() -> None:
    from kavi.gates.adequacy import adequacy_gate

    proposal = parse_proposal(SIGN_OF_SPEC)
    plan = plan_adequacy(proposal, HONEST, [], AdequacyConfig())
    done = {"tried": 0, "cut": "", "crashes": [], "slow": [{"key": "p1", "s": 1.0}]}
    fast = adequacy_gate(proposal, AdequacyConfig(), plan, [], done, [],
                         {"p1": {"ran": True, "output": {"sign": 1}, "ms": 3.0}}, others_passed=True)
    assert fast.verdict is Verdict.FAILED, fast.reason
    [message] = fast.messages
    assert "did not finish in 1.0 s" in message and "returned {\"sign\": 1} in 3 ms" in message, message
    assert fast.details["counterexamples"][0]["kind"] == "too_slow"
    # The independent took a tenth of the time the candidate had: the input may simply be hard. No verdict.
    slow = adequacy_gate(proposal, AdequacyConfig(), plan, [], done, [],
                         {"p1": {"ran": True, "output": {"sign": 1}, "ms": 100.0}}, others_passed=True)
    assert slow.verdict is Verdict.PASSED
    alone = adequacy_gate(proposal, AdequacyConfig(), plan, [], done, [], None, others_passed=True)
    assert alone.verdict is Verdict.PASSED


def test_an_int_shown_above_one_is_probed_at_twice_its_value() -> None:
    probes = [p["input"] for p in probe_inputs(parse_proposal(SIGN_OF_SPEC), HONEST, [], 200)]
    assert {"n": 10} in probes  # the example's 5, doubled: where a needlessly slow algorithm shows
