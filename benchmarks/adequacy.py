"""The adequacy of the evidence, measured on material the forge did not write: HumanEval / MBPP problems (see
datasets.py), their reference solutions and plausible wrong solutions (mutants) that pass every example and holdout
of their proposal.

Every figure comes from the gates as the forge's verify step runs them (kavi.gates.runner.run_gates, the default
configuration: the gate sandbox, generated inputs, the resource gate and the mutation analysis):

- mutants with no independent implementation: how many pass every gate and raise no question that exposes them
  (trusted silently), how many raise one (a person answering with the dataset's reference would settle it against the
  mutant), and how many questions the person answers before the exposing one;
- mutants with the dataset's reference as the independent implementation: how many are rejected;
- references, with and without the independent: questions per honest skill (the cost to a person);
- verification time per reference with the analysis on and off, side by side (interleaved, same machine, same run).

Run: python benchmarks/adequacy.py [--dataset humaneval|mbpp|both] [--limit 50] [--workers 2] [--data DIR]
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import datasets  # noqa: E402  (benchmarks/datasets.py)


@dataclass
class Outcome:
    name: str
    passed: bool  # every gate passed in the first round
    failing: list[str]
    questions: list[dict[str, Any]]  # the first round's
    adequacy: dict[str, Any]
    adequacy_s: float
    verify_s: float
    exposed_after: int | None = None  # questions a person answered until one exposed the skill (all rounds)
    answered: int = 0  # questions answered over every round
    rounds: int = 1  # verifications until no question was left or one exposed the skill


def _files(cassette: Path) -> dict[str, str]:
    doc = yaml.safe_load(cassette.read_text())
    build = next(i for i in doc["interactions"] if i["kind"] == "build")
    return {str(k): str(v) for k, v in build["files"].items()}


def _skill(files: dict[str, str]) -> str:
    return next(v for k, v in files.items() if k.startswith("skills/"))


def _gates(proposal: Any, files: dict[str, str], reference: str | None, adequacy: bool, questions: int | None,
           mypy_cache: Path, work: Path) -> tuple[Any, float]:
    from kavi.forge.context import ForgeSettings, adequacy_config
    from kavi.gates.runner import GateConfig, run_gates

    settings = ForgeSettings(adequacy_max_mutants=ForgeSettings.adequacy_max_mutants if adequacy else 0,
                             adequacy_max_questions=questions if questions is not None
                             else ForgeSettings.adequacy_max_questions)
    config = GateConfig(wall_s=60, mypy_cache_root=mypy_cache, adequacy=adequacy_config(settings, True, ""))
    t0 = time.perf_counter()
    out = run_gates(work, proposal, {k: v.encode() for k, v in files.items()}, config,
                    independent=reference.encode() if reference is not None else None,
                    independent_label="dataset reference" if reference is not None else "")
    return out, time.perf_counter() - t0


def _verify(data: Path, name: str, mutant: bool, independent: bool, adequacy: bool, mypy_cache: Path,
            questions: int | None = None, rounds: int = 1) -> Outcome:
    """Verify one proposal; with `rounds` > 1 and no independent, a person (the dataset's reference) answers every
    question of a passing skill, each answer added to the spec as `kavi answer` adds it, and the skill is verified
    again, until a question exposes it, none is left, or the rounds run out."""
    from kavi.proposals.model import load_proposal
    from kavi.verdicts import GATE_ADEQUACY

    proposal = load_proposal(data / ("mutant-proposals" if mutant else "proposals") / f"{name}.json")
    files = _files(data / ("mutant-cassettes" if mutant else "cassettes") / f"{name}.yaml")
    reference = _skill(_files(data / "cassettes" / f"{name}.yaml"))
    # The dataset's own tests (the reference proposal's examples and holdouts; a mutant's proposal keeps only those
    # the mutant passes): what a person who knows the task can give when asked for an input whose answer differs.
    full = load_proposal(data / "proposals" / f"{name}.json")
    tests = [(ex.input, ex.expected) for ex in (*full.examples, *full.holdout_examples)]
    work = Path(tempfile.mkdtemp(prefix="kavi-adequacy-"))
    out, took = _gates(proposal, files, reference if independent else None, adequacy, questions, mypy_cache,
                       work / "gates-1")
    by_gate = {r.gate: r for r in out.results}
    result = by_gate[GATE_ADEQUACY]
    outcome = Outcome(name, out.passed, [g for g, r in by_gate.items() if not r.ok],
                      list(result.details.get("questions") or []), dict(result.details), result.duration_s, took)
    asked = outcome.questions
    for round_number in range(1, rounds + 1):
        if not out.passed:
            if round_number > 1:  # the answers of the rounds before made it fail acceptance
                outcome.exposed_after = outcome.answered
            break
        if not asked or round_number == rounds:
            break
        proposal, exposing = _answer(work / f"person-{round_number}", proposal, reference, asked, tests)
        if exposing is not None:
            outcome.exposed_after = outcome.answered + exposing
            outcome.answered += exposing
            break
        outcome.answered += len(asked)
        outcome.rounds += 1
        out, _took = _gates(proposal, files, None, adequacy, questions, mypy_cache, work / f"gates-{round_number + 1}")
        asked = list({r.gate: r for r in out.results}[GATE_ADEQUACY].details.get("questions") or [])
    return outcome


def _differing_test(tests: list[tuple[dict[str, Any], dict[str, Any]]], answer: Any) -> tuple[Any, Any] | None:
    """A dataset test whose expected output differs from `answer` in the fields `answer` holds."""
    from kavi.gates.values import equal

    if not isinstance(answer, dict):
        return None
    for test_input, expected in tests:
        if any(k in expected and not equal(expected[k], v) for k, v in answer.items()):
            return test_input, expected
    return None


def _answer(work: Path, proposal: Any, reference: str, questions: list[dict[str, Any]],
            tests: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[Any, int | None]:
    """The person answers each question in turn with what the dataset's reference returns (run in the gate sandbox):
    (the spec with every answer in it, as holdouts or inputs outside the domain; the number of the first answer that
    contradicts the skill, or None). Asked for an input whose answer differs from the one every example and holdout
    shows (a "uniform" question), the person gives one of the dataset's tests where it does, when there is one (as a
    holdout: the next verification judges the skill on it), else answers the question's input."""
    from kavi.forge.holdouts import HoldoutError, with_holdout
    from kavi.gates.acceptance import run_cases
    from kavi.gates.differential import _declared
    from kavi.gates.values import equal
    from kavi.proposals.model import parse_proposal
    from kavi.sandbox.runner import Limits

    asked = []
    gave = 0
    for q in questions:
        given = _differing_test(tests, q.get("shown", q.get("candidate"))) if q.get("kind") == "uniform" else None
        if given is not None:  # a new holdout; the next verification judges the skill on it
            with contextlib.suppress(HoldoutError):
                proposal = with_holdout(proposal, given[0], given[1])
            gave += 1
        elif isinstance(q.get("input"), dict):
            asked.append(q)
    run = run_cases(work, proposal, reference.encode(), [{"input": q["input"]} for q in asked], Limits(wall_s=30))
    for i, q in enumerate(asked, 1):
        answer = run.results.get(i - 1)
        if not answer or not answer.get("ran"):
            # The reference refuses the input too: the person says it is outside the domain.
            data = proposal.model_dump(mode="json")
            data["outside_domain"] = [*data.get("outside_domain", []), q["input"]]
            proposal = parse_proposal(data, proposal.name)
            continue
        skill = q.get("candidate")
        right = _declared(proposal, answer["output"])
        if q.get("kind") == "crash" or not (isinstance(skill, dict) and equal(right, _declared(proposal, skill))):
            return proposal, gave + i
        try:
            proposal = with_holdout(proposal, q["input"], right)
        except HoldoutError:
            continue
    return proposal, None


def _run_all(data: Path, names: list[str], workers: int, **kw: Any) -> list[Outcome]:
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda n: _verify(data, n, **kw), names))


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=["humaneval", "mbpp", "both"], default="humaneval")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--questions", type=int, default=None, help="questions kept per attempt (default: the "
                                                                         "forge's, KAVI_ADEQUACY_MAX_QUESTIONS)")
    parser.add_argument("--rounds", type=int, default=3, help="verifications per skill while a person answers its "
                                                                  "questions (1: the first verification's only)")
    parser.add_argument("--mutants-only", action="store_true", help="only the mutants without an independent")
    args = parser.parse_args()
    os.environ.setdefault("KAVI_HOME", tempfile.mkdtemp(prefix="kavi-adequacy-home-"))
    data = datasets.converted(args.data, args.dataset, args.limit)
    from kavi.gates.tools import warm_mypy_cache
    from kavi.sandbox.runner import Limits

    mypy_cache = Path(tempfile.mkdtemp(prefix="kavi-adequacy-mypy-"))
    warm_mypy_cache(mypy_cache / ".warmup", mypy_cache, Limits(wall_s=120))
    refs = sorted(p.stem for p in (data / "proposals").glob("*.json"))
    mutants = sorted(p.stem for p in (data / "mutant-proposals").glob("*.json"))
    print(f"{len(refs)} reference proposals, {len(mutants)} mutants; {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.2f}")

    alone = _run_all(data, mutants, args.workers, mutant=True, independent=False, adequacy=True,
                     mypy_cache=mypy_cache, questions=args.questions, rounds=args.rounds)
    if args.mutants_only:
        for o in alone:
            print(f"{o.name}: passed={o.passed} questions={len(o.questions)} exposed_after={o.exposed_after} "
                  f"answered={o.answered} rounds={o.rounds}")
        return
    passed = [o for o in alone if o.passed]
    exposed = [o for o in passed if o.exposed_after is not None]
    silent = [o for o in passed if o.exposed_after is None]
    with_indep = _run_all(data, mutants, args.workers, mutant=True, independent=True, adequacy=True,
                          mypy_cache=mypy_cache)
    rejected = [o for o in with_indep if not o.passed]
    honest_alone = _run_all(data, refs, args.workers, mutant=False, independent=False, adequacy=True,
                            mypy_cache=mypy_cache, questions=args.questions, rounds=args.rounds)
    honest_indep = _run_all(data, refs, args.workers, mutant=False, independent=True, adequacy=True,
                            mypy_cache=mypy_cache)
    # Side by side: each reference verified with the analysis off, then on, one after the other.
    times_on: list[float] = []
    times_off: list[float] = []
    verdicts_same = 0
    for name in refs:
        off = _verify(data, name, mutant=False, independent=True, adequacy=False, mypy_cache=mypy_cache)
        on = _verify(data, name, mutant=False, independent=True, adequacy=True, mypy_cache=mypy_cache)
        times_off.append(off.verify_s)
        times_on.append(on.verify_s)
        verdicts_same += (off.failing == [g for g in on.failing if g != "adequacy"])
    q_alone = [len(o.questions) for o in honest_alone if o.passed]
    q_total = [o.answered for o in honest_alone if o.passed]
    q_indep = [len(o.questions) for o in honest_indep if o.passed]
    adequacy_s = [o.adequacy_s for o in honest_indep if o.passed]
    ratio = _median(times_on) / _median(times_off) - 1 if times_off else float("nan")

    def share(part: int, whole: int) -> str:
        return f"{part}/{whole} ({100.0 * part / whole:.0f}%)" if whole else "-"

    print()
    print(f"{'figure':64} {'measured':>14} {'target':>10}")
    print(f"{'mutants, no independent: pass every gate':64} {share(len(passed), len(alone)):>14}")
    print(f"{'mutants, no independent: trusted without an exposing question':64} "
          f"{share(len(silent), len(alone)):>14} {'<= 1 in 20':>10}")
    print(f"{'mutants, no independent: exposed by a question':64} {share(len(exposed), len(alone)):>14}")
    first_round = [o for o in exposed if o.rounds == 1]
    print(f"{'  of which by a question of the first verification':64} {share(len(first_round), len(alone)):>14}")
    if exposed:
        until = [o.exposed_after or 0 for o in exposed]
        print(f"{'  questions answered until the exposing one (median, max)':64} "
              f"{_median([float(n) for n in until]):>9.0f}, {max(until):>3}")
    print(f"{'mutants, the reference as independent: rejected':64} {share(len(rejected), len(with_indep)):>14} "
          f"{'100%':>10}")
    print(f"{'references, no independent: questions, first verification (median, max)':64} "
          f"{_median([float(q) for q in q_alone]):>9.0f}, {max(q_alone, default=0):>3} {'<= 2':>10}")
    print(f"{'references, no independent: answered until none is left (median, max)':64} "
          f"{_median([float(q) for q in q_total]):>9.0f}, {max(q_total, default=0):>3}")
    print(f"{'references, with independent: questions per skill (median, max)':64} "
          f"{_median([float(q) for q in q_indep]):>9.0f}, {max(q_indep, default=0):>3}")
    print(f"{'p50 verification, analysis off (s)':64} {_median(times_off):>14.2f}")
    print(f"{'p50 verification, analysis on (s)':64} {_median(times_on):>14.2f}")
    print(f"{'time the analysis adds to verification (p50 on / p50 off - 1)':64} {100 * ratio:>13.0f}% "
          f"{'<= 25%':>10}")
    print(f"{'p50 of the analysis itself, in its sandbox (s)':64} {_median(adequacy_s):>14.3f}")
    print(f"{'other gates: same verdicts with the analysis on and off':64} {share(verdicts_same, len(refs)):>14}")
    if silent:
        print("\nmutants trusted without an exposing question:")
        for o in silent:
            print(f"  {o.name}: {o.answered} question(s) answered over {o.rounds} verification(s); "
                  f"{o.adequacy.get('tried', 0)} mutants tried, {o.adequacy.get('surviving', 0)} surviving, "
                  f"{o.adequacy.get('equivalent', 0)} equivalent")
    escaped = [o.name for o in with_indep if o.passed]
    if escaped:
        print("\nmutants trusted with the reference as independent: " + ", ".join(escaped))
    print(f"\nload average after {os.getloadavg()[0]:.2f}")
    print("\nverdicts: " + json.dumps({"silent": len(silent), "mutants": len(alone), "rejected_with_independent":
                                       len(rejected), "honest_questions_median": _median([float(q) for q in q_alone])}))


if __name__ == "__main__":
    main()
