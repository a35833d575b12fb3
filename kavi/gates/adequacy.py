"""The adequacy of the evidence: does it decide the skill's behaviour, or would a slightly different skill pass too?

After the other gates, the candidate's mutants (kavi.gates.mutants) run in the acceptance sandbox on the examples,
the holdouts, the generated inputs and the adequacy probes: inputs next to the shown examples that sit on the
code's own constants, on a sibling value (equal arguments) or one step from either (kavi.gates.adequacy_runner).
A mutant that passes everything the forge checks, yet answers differently from the candidate somewhere, is a
question the evidence leaves open. The independent implementation answers first: on its side the mutant is killed,
on the mutant's side the candidate is refuted (a counterexample, and the gate fails); only questions it cannot
settle (it disagrees with both, or there is none) go to a person, each with the smallest input found and the two
answers. The verdict's details are the verification report's `adequacy` section.
"""

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from kavi.gates.boundary import canonical
from kavi.gates.differential import SLOW_FACTOR, SLOW_MIN_S, STOPPED, _declared, _kept, _show
from kavi.gates.generate import example_fixtures
from kavi.gates.mutants import Mutant, choose, plan_mutants, source_constants
from kavi.gates.values import equal, with_fixtures
from kavi.lifecycle import Verdict
from kavi.proposals.model import Proposal
from kavi.verdicts import GATE_ADEQUACY, GateResult

MAX_COUNTEREXAMPLES = 5
MAX_SUBTLETY = 1_000_000  # a variant whose count of differing inputs was not reported


@dataclass(frozen=True)
class AdequacyConfig:
    """Bounds per attempt: the mutants tried, the questions kept, the probes made, the sandbox time spent."""

    enabled: bool = True
    skipped_reason: str = ""
    max_mutants: int = 80
    max_questions: int = 3
    max_probes: int = 100
    budget_s: float = 1.5
    call_cap_s: float = 0.25


@dataclass
class AdequacyPlan:
    """What one verification's analysis runs: the chosen mutants, the probes, and the sandbox job's section."""

    mutants: list[Mutant]
    planned: int
    probes: list[dict[str, Any]]
    section: dict[str, Any] | None
    note: str = ""
    by_index: dict[int, Mutant] = field(default_factory=dict)


# --- probes: inputs next to the shown examples, on the code's constants and on sibling values ---


def _leaf_variants(value: Any, ints: list[int], strs: list[str], siblings: list[Any], fixed: bool = False
                   ) -> list[Any]:
    """Values for one position of a shown example. `fixed`: a list every shown example holds at one length (positional
    arguments, a pair): its length is kept."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        near = [s for s in siblings if type(s) is int and s != value]
        out: list[Any] = [*near, *(c + d for c in ints for d in (0, -1, 1)), value - 1, value + 1, 0, 1, -1]
        out += [s + d for s in near for d in (-1, 1)]
        if value > 1:
            out.append(value * 2)  # twice as far: where a needlessly slow algorithm shows
        return out
    if isinstance(value, float):
        numbers: list[Any] = [float(s) for s in siblings
                              if isinstance(s, int | float) and not isinstance(s, bool) and s != value]
        return [*numbers, value - 1.0, value + 1.0, 0.0, *(float(c) for c in ints)]
    if isinstance(value, str):
        texts: list[Any] = [s for s in siblings if isinstance(s, str) and s != value]
        out = [*texts, *strs, ""]
        if value:
            out += [value[:-1], value + value[-1], value[0], value[1:], value.upper(), value.lower(), value + " ",
                    " " + value]
        out += [value + c for c in strs[:4]] + [c + value for c in strs[:4]]
        return out
    if isinstance(value, list) and fixed:
        out = [value[::-1]] if len(value) > 1 else []
        if len(value) >= 2:
            out.append([value[1], value[0], *value[2:]])
        return out
    if isinstance(value, list):
        out = [[]]
        if value:
            out += [value[1:], value[:-1], value[:1], value[: len(value) // 2], [value[0], *value],
                    [*value, value[-1]], value[::-1]]
            with contextlib.suppress(TypeError):  # a list of mixed kinds has no order
                out.append(sorted(value))
            if len(value) >= 2:
                out.append([value[1], value[0], *value[2:]])
        return out
    return []


def _paths(value: Any, path: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[tuple[Any, ...], Any]]:
    """(path, value) for every list and scalar inside `value`, outer ones first."""
    found: list[tuple[tuple[Any, ...], Any]] = []
    if isinstance(value, dict):
        for key in list(value)[:12]:
            found += _paths(value[key], (*path, key), depth + 1)
    elif isinstance(value, list):
        if path:
            found.append((path, value))
        if depth < 4:
            for i, item in enumerate(value[:8]):
                found += _paths(item, (*path, i), depth + 1)
    elif value is not None:
        found.append((path, value))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replaced(copy[head], rest, new)
    return copy


def probe_inputs(proposal: Proposal, source: str, taken: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Up to `limit` cases, each a shown example with one value changed: to a constant of the code (or one off),
    to another value of the same example (equal arguments), one step away, or a list shortened, grown, reordered.
    Never derived from a holdout; never an input an example, holdout or generated case already holds."""
    if limit <= 0 or not proposal.examples:
        return []
    ints, strs = source_constants(source)
    seen = {canonical(ex.input) for ex in (*proposal.examples, *proposal.holdout_examples)}
    seen |= {canonical(c.get("input")) for c in taken} | {canonical(i) for i in proposal.outside_domain}
    queues: list[tuple[dict[str, Any], dict[str, Any], tuple[Any, ...], list[Any]]] = []
    lengths: dict[tuple[Any, ...], list[int]] = {}
    for ex in proposal.examples:
        for path, value in _paths(ex.input):
            if isinstance(value, list):
                lengths.setdefault(path, []).append(len(value))
    for ex in proposal.examples:
        paths = _paths(ex.input)
        leaves = [v for _p, v in paths if not isinstance(v, list)]
        for path, value in paths:
            siblings = [v for v in leaves if v is not value]
            # One length wherever shown: a field's own list, or a nested one that two examples or more agree on.
            shown = lengths.get(path, [])
            fixed = isinstance(value, list) and len(set(shown)) == 1 and (len(path) == 1 or len(shown) > 1)
            queues.append((ex.input, example_fixtures(ex), path, _leaf_variants(value, ints, strs, siblings, fixed)))
    cases: list[dict[str, Any]] = []
    step = 0
    while len(cases) < limit and any(step < len(q[3]) for q in queues):
        for base, fixtures, path, variants in queues:
            if step >= len(variants) or len(cases) >= limit:
                continue
            candidate = _replaced(base, path, variants[step])
            try:
                key = canonical(candidate)
                json.dumps(candidate, allow_nan=False)
            except (TypeError, ValueError):
                continue
            if key in seen:
                continue
            seen.add(key)
            cases.append({"input": candidate, **fixtures})
        step += 1
    return cases


# --- the plan and the sandbox job's section ---


def plan_adequacy(proposal: Proposal, source: str, generated: list[dict[str, Any]], config: AdequacyConfig
                  ) -> AdequacyPlan:
    """The mutants and probes of one verification, and the section of the acceptance job that runs them."""
    if not config.enabled or config.max_mutants <= 0:
        return AdequacyPlan([], 0, [], None, config.skipped_reason or "mutation analysis is off")
    try:
        planned = plan_mutants(source)
    except (SyntaxError, ValueError, RecursionError) as err:
        return AdequacyPlan([], 0, [], None, f"no mutant could be planned: {type(err).__name__}")
    chosen = choose(planned, config.max_mutants)
    if not chosen:
        return AdequacyPlan([], 0, [], None, "the skill has no function a mutant could change")
    probes = probe_inputs(proposal, source, generated, config.max_probes)
    named = {k for ex in (*proposal.examples, *proposal.holdout_examples) for k in ex.expected}
    section = {
        "mutants": [m.index for m in chosen],
        "pinned": [s.name for s in proposal.outputs if s.name in named] or [s.name for s in proposal.outputs],
        "judged": len(proposal.examples) + len(proposal.holdout_examples),
        "shown_expected": [ex.expected for ex in proposal.examples],
        "probes": probes,
        "budget_s": config.budget_s,
        "call_cap_s": config.call_cap_s,
    }
    return AdequacyPlan(chosen, len(planned), probes, section, by_index={m.index: m for m in chosen})


# --- the verdict ---


# The independent implementation's runs by pool key ("g3": generated input 3, "p5": probe 5), when it was used.
Answers = dict[str, dict[str, Any]] | None


def _independent_entry(answers: Answers, key: str) -> dict[str, Any] | None:
    """The independent implementation's run on a pool input, when it was used and reached that input."""
    entry = (answers or {}).get(key)
    return entry if isinstance(entry, dict) and entry.get("error_kind") not in STOPPED else None


def _independent_answer(answers: Answers, key: str) -> dict[str, Any] | None:
    entry = _independent_entry(answers, key)
    return entry if entry is not None and entry.get("ran") else None


def _same(proposal: Proposal, a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return equal(_declared(proposal, a), _declared(proposal, b))
    return equal(a, b)


def _case_of(key: str, generated: list[dict[str, Any]], probes: list[dict[str, Any]]) -> dict[str, Any] | None:
    pool = generated if key[:1] == "g" else probes
    try:
        index = int(key[1:])
    except ValueError:
        return None
    return pool[index] if 0 <= index < len(pool) else None


def _case_input(key: str, generated: list[dict[str, Any]], probes: list[dict[str, Any]]) -> Any:
    case = _case_of(key, generated, probes)
    return None if case is None else case.get("input")


def _with_fixtures(entry: dict[str, Any], key: str, generated: list[dict[str, Any]],
                   probes: list[dict[str, Any]]) -> dict[str, Any]:
    return with_fixtures(entry, _case_of(key, generated, probes))


def adequacy_gate(proposal: Proposal, config: AdequacyConfig, plan: AdequacyPlan, lines: list[dict[str, Any]] | None,
                  done: dict[str, Any] | None, generated: list[dict[str, Any]], indep: Answers,
                  *, others_passed: bool, duration_s: float = 0.0) -> GateResult:
    """The verdict on the analysis the acceptance sandbox reported (`lines`, one per mutant, and `done`)."""
    details: dict[str, Any] = {"planned": plan.planned, "tried": 0, "killed": 0, "surviving": 0, "equivalent": 0,
                               "not_finished": 0, "killed_by": {}, "questions": [], "questions_cut": 0,
                               "settled_by_independent": 0, "probes": len(plan.probes), "survivors": []}
    if plan.section is None:
        return GateResult(GATE_ADEQUACY, Verdict.OMITTED, plan.note or "not run", 0.0, [], details)
    if not others_passed:
        return GateResult(GATE_ADEQUACY, Verdict.OMITTED, "not judged: the other gates did not all pass", duration_s,
                          [], details)
    if lines is None or done is None:
        return GateResult(GATE_ADEQUACY, Verdict.OMITTED, "not judged: the sandboxed run ended before the analysis "
                          "did", duration_s, [], details)
    if done.get("skipped"):
        return GateResult(GATE_ADEQUACY, Verdict.OMITTED, f"not run: {done['skipped']}", duration_s, [], details)
    examples = len(proposal.examples)
    killed_by: dict[str, int] = {}
    questions: dict[str, dict[str, Any]] = {}
    refuted: list[dict[str, Any]] = []
    survivors: list[str] = []
    for report in lines:
        mutant = plan.by_index.get(report.get("mutant"))  # type: ignore[arg-type]
        if mutant is None:
            continue
        status = report.get("status")
        if status == "not_applicable":
            continue
        details["tried"] += 1
        if status == "killed":
            if report.get("by") == "case":
                case = int(report.get("case") or 0)
                how = "an example" if case < examples else "a holdout"
            else:
                how = "a generated input" if str(report.get("key", "")).startswith("g") else "a probe"
            how += " (it failed)" if report.get("why") != "output" else ""
            killed_by[how] = killed_by.get(how, 0) + 1
            details["killed"] += 1
            continue
        if status == "equivalent":
            details["equivalent"] += 1
            continue
        if status == "cut":
            details["not_finished"] += 1
            continue
        if status != "distinguished":
            continue
        verdict = _settle(proposal, report, indep, generated, plan.probes)
        if verdict == "candidate":
            killed_by["the independent implementation"] = killed_by.get("the independent implementation", 0) + 1
            details["killed"] += 1
            details["settled_by_independent"] += 1
            continue
        if isinstance(verdict, dict):  # the independent sides with the mutant: the candidate is refuted
            refuted.append({**verdict, "mutant": mutant.describe()})
            details["killed"] += 1
            continue
        details["surviving"] += 1
        survivors.append(mutant.describe())
        shrunk = report.get("shrunk") or {}
        first = (report.get("distinguishing") or [{}])[0]
        question_input = shrunk.get("input", _case_input(str(first.get("key", "")), generated, plan.probes))
        key = canonical(question_input)
        q = questions.setdefault(key, _with_fixtures(
            {"input": question_input, "candidate": shrunk.get("candidate", first.get("candidate")),
             "alternatives": [], "mutants": [], "subtlest": MAX_SUBTLETY},
            str(first.get("key", "")), generated, plan.probes))
        q["subtlest"] = min(q["subtlest"], int(report.get("differs_on") or MAX_SUBTLETY))
        alternative = shrunk.get("mutant", first.get("mutant"))
        if not any(_same(proposal, alternative, a) for a in q["alternatives"]):
            q["alternatives"].append(alternative)
        q["mutants"].append(mutant.describe())
    crash_questions = _crash_questions(proposal, done, indep, generated, plan.probes, refuted, details)
    _too_slow(done, indep, generated, plan.probes, refuted)
    uniform = _uniform_question(done, indep, generated, plan.probes, details)
    # The subtlest variants first (those that part from the candidate on the fewest inputs: a plausible wrong skill
    # differs from the right one on few), then those most variants share, then the smallest input.
    ranked = sorted(questions.values(),
                    key=lambda q: (q["subtlest"], -len(q["mutants"]), len(canonical(q["input"]))))
    ranked += sorted(crash_questions, key=lambda q: len(canonical(q["input"])))
    # One answer to everything comes first: no variant's question can reach an input where the answer differs.
    ranked = ([uniform] if uniform is not None else []) + ranked
    kept = ranked[: max(0, config.max_questions)]
    details.update(
        killed_by=killed_by, survivors=survivors[:20], questions_cut=len(ranked) - len(kept),
        questions=[{"number": i, "kind": q.get("kind", "mutant"), "input": _kept(q["input"]),
                    "candidate": _kept(q["candidate"]), "alternatives": [_kept(a) for a in q["alternatives"][:3]],
                    "mutants": q["mutants"][:5], **({"fixtures": q["fixtures"]} if "fixtures" in q else {}),
                    **({"shown": _kept(q["shown"]), "inputs_tried": q["inputs_tried"]} if "shown" in q else {})}
                   for i, q in enumerate(kept, 1)],
        cut=str(done.get("cut") or ""),
    )
    summary = (f"{details['tried']} mutants: {details['killed']} killed, {details['surviving']} surviving, "
               f"{details['equivalent']} equivalent")
    if details["not_finished"] or details["cut"]:
        summary += f", {details['not_finished']} not finished (the time budget)"
    if refuted:
        details["counterexamples"] = refuted[:MAX_COUNTEREXAMPLES]
        messages = [f"on input {_show(r['input'])} your skill {_did(r['candidate'])}; an independent "
                    f"implementation of the same spec returned {_show(r['independent'])}"
                    + (f" in {r['independent_ms']:.0f} ms" if r.get("independent_ms") is not None else "")
                    + (f", as a variant of your skill does ({r['mutant']})" if r.get("mutant") else "")
                    for r in refuted[:MAX_COUNTEREXAMPLES]]
        return GateResult(GATE_ADEQUACY, Verdict.FAILED, f"{len(refuted)} counterexample(s) found by mutation; "
                          f"{summary}", duration_s, messages, details)
    if kept:
        summary += f"; {len(kept)} open question(s) for a person" + (
            f" ({details['questions_cut']} more not asked)" if details["questions_cut"] else "")
    return GateResult(GATE_ADEQUACY, Verdict.PASSED, summary, duration_s, [], details)


def _did(candidate: Any) -> str:
    if isinstance(candidate, str) and candidate.startswith("<raises "):
        return "raised " + candidate[len("<raises "):-1]
    if isinstance(candidate, str) and candidate.startswith("<did not finish"):
        return candidate.strip("<>")
    return f"returned {_show(candidate)}"


def _too_slow(done: dict[str, Any], indep: Answers, generated: list[dict[str, Any]], probes: list[dict[str, Any]],
              refuted: list[dict[str, Any]]) -> None:
    """The probes the candidate could not finish even with SLOW_MIN_S: a counterexample where the independent
    implementation answered in a small fraction of that time (as the differential gate judges a generated input)."""
    for slow in done.get("slow") or []:
        if not isinstance(slow, dict):
            continue
        key = str(slow.get("key", ""))
        case_input = _case_input(key, generated, probes)
        entry = _independent_answer(indep, key)
        given = float(slow.get("s") or 0.0)
        took = entry.get("ms") if entry is not None else None
        if case_input is None or not isinstance(took, int | float) or given < SLOW_MIN_S \
                or given < SLOW_FACTOR * float(took) / 1000:
            continue
        refuted.append(_with_fixtures({"kind": "too_slow", "input": _kept(case_input),
                                       "candidate": f"<did not finish in {given:.1f} s>",
                                       "independent": _kept(entry.get("output") if entry else None),
                                       "independent_ms": round(float(took), 1), "mutant": ""},
                                      key, generated, probes))


def _crash_questions(proposal: Proposal, done: dict[str, Any], indep: Answers,
                     generated: list[dict[str, Any]], probes: list[dict[str, Any]], refuted: list[dict[str, Any]],
                     details: dict[str, Any]) -> list[dict[str, Any]]:
    """The probes on which the candidate raised an exception it did not declare: the independent implementation
    settles each it ran on (it answered: a counterexample; it refused too: outside the domain); the rest are
    questions ("is this input outside the skill's domain, or what should it return?")."""
    out: list[dict[str, Any]] = []
    details["crashes"] = 0
    for crash in done.get("crashes") or []:
        if not isinstance(crash, dict):
            continue
        key = str(crash.get("key", ""))
        case_input = _case_input(key, generated, probes)
        if case_input is None:
            continue
        details["crashes"] += 1
        raised = f"<raises {str(crash.get('error') or 'an exception')[:160]}>"
        entry = _independent_entry(indep, key)
        if entry is not None and entry.get("ran"):
            refuted.append(_with_fixtures({"kind": "exception", "input": _kept(case_input), "candidate": raised,
                                           "independent": _kept(entry.get("output")), "mutant": ""},
                                          key, generated, probes))
            continue
        if entry is not None:
            details["settled_by_independent"] += 1  # it refuses the input too: outside the domain
            continue
        out.append(_with_fixtures({"kind": "crash", "input": case_input, "candidate": raised, "alternatives": [],
                                   "mutants": []}, key, generated, probes))
    return out


def _pin(output: Any, answer: Any) -> Any:
    """`output` cut to the fields `answer` holds (the outputs the examples pin)."""
    if isinstance(output, dict) and isinstance(answer, dict):
        return {k: output.get(k) for k in answer}
    return output


def _uniform_question(done: dict[str, Any], indep: Answers, generated: list[dict[str, Any]],
                      probes: list[dict[str, Any]], details: dict[str, Any]) -> dict[str, Any] | None:
    """When every example and holdout shows one answer, the evidence cannot tell the candidate from a skill that
    always answers that (no variant's question reaches an input where the answer should differ). Asked when the
    candidate gave that answer to every input it ran on, or when two shown cases or more all show it. The
    independent implementation answers first: where it agrees with the candidate on every input it ran, that settles
    it; where it answers otherwise, that input is the question, with both answers. Else a person is asked for an
    input whose answer differs, or about the nearest input where the candidate answered otherwise (or, when it never
    did, about the probe nearest the examples)."""
    found = done.get("one_answer")
    if not isinstance(found, dict) or "answer" not in found:
        return None
    if not found.get("constant") and int(found.get("judged") or 0) < 2:
        return None
    answer = found["answer"]
    details["one_answer"] = {"answer": _kept(answer), "inputs": int(found.get("inputs") or 0),
                             "constant": bool(found.get("constant"))}
    keys = [f"p{i}" for i in range(len(probes))] + [f"g{i}" for i in range(len(generated))]
    other = found.get("other") if isinstance(found.get("other"), dict) else None

    def asked(key: str, candidate: Any, alternatives: list[Any]) -> dict[str, Any]:
        return _with_fixtures({"kind": "uniform", "input": _case_input(key, generated, probes), "candidate": candidate,
                               "alternatives": alternatives, "mutants": [], "shown": answer,
                               "inputs_tried": details["one_answer"]["inputs"]}, key, generated, probes)

    if other is None:  # the one answer to everything: the first input where the independent answers otherwise
        agreed = 0
        for key in keys:
            theirs = _independent_answer(indep, key)
            if theirs is None:
                continue
            if not equal(_pin(theirs.get("output"), answer), answer):
                return asked(key, answer, [_pin(theirs.get("output"), answer)])
            agreed += 1
        if agreed:
            details["settled_by_independent"] += 1
            return None
        return asked(next(iter(keys), ""), answer, [])
    key, mine = str(other.get("key", "")), _pin(other.get("output"), answer)
    theirs = _independent_answer(indep, key)
    if theirs is not None:  # where the candidate answered otherwise: the independent confirms it, or disagrees
        if equal(_pin(theirs.get("output"), answer), mine):
            details["settled_by_independent"] += 1
            return None
        return asked(key, mine, [_pin(theirs.get("output"), answer)])
    return asked(key, mine, [])


def _settle(proposal: Proposal, report: dict[str, Any], indep: Answers,
            generated: list[dict[str, Any]], probes: list[dict[str, Any]]) -> dict[str, Any] | str | None:
    """"candidate" when the independent implementation agrees with the candidate on a distinguishing input, a
    counterexample when it agrees with the mutant there instead, None when it settles nothing."""
    for found in report.get("distinguishing") or []:
        key = str(found.get("key", ""))
        answer = _independent_answer(indep, key)
        if answer is None:
            continue
        theirs = answer.get("output")
        if _same(proposal, theirs, found.get("candidate")):
            return "candidate"
        if _same(proposal, theirs, found.get("mutant")):
            return _with_fixtures({"kind": "mutant", "input": _kept(_case_input(key, generated, probes)),
                                   "candidate": _kept(found.get("candidate")), "independent": _kept(theirs)},
                                  key, generated, probes)
    return None
