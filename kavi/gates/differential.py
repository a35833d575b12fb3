"""The differential gate: evidence beyond the holdouts, from inputs nobody wrote down.

Acceptance judges the examples and the holdout examples, which a person wrote and which will always be few: a
plausible wrong skill can pass them all. This gate looks at the candidate's answers on generated inputs
(kavi.gates.generate), which the acceptance sandbox ran right after the examples, each twice:

- checks that need no oracle: the output matches the proposal's output fields, the same input gave the same
  output both times, and the skill raised no undeclared exception on valid input;
- and, when one is given, a comparison with an independent implementation of the same spec written by a
  different model (N-version): any disagreement is a counterexample, and the attempt is not trusted; so is an
  input the candidate could not finish within the budget where the independent answered in a small fraction of
  that time (a wrong loop bound, an exponential recursion).

The independent implementation is model-written code too. It is scanned with the policy first and runs in a
sandbox of its own; it is used as evidence only if it passes every example and holdout example itself (the
reason it was not used never quotes a holdout). Inputs it rejects are outside the domain and are not judged.

Without a usable independent implementation, an exception on a generated input is judged by its kind: a
ValueError (which pydantic's validation errors are) declares the input outside the skill's domain, and so do the
handles' own errors (a missing vault file, an HTTP error, an undeclared secret); any other exception —
ZeroDivisionError, IndexError, KeyError, AttributeError, RecursionError... — is a bug the inputs exposed.
"""

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from kavi.gates.acceptance import CaseRun, judge_examples
from kavi.gates.values import equal, with_fixtures
from kavi.lifecycle import Verdict
from kavi.proposals.model import Proposal
from kavi.proposals.values import parse_type, primitive_matches
from kavi.settings import EVIDENCE_BUDGET_S, EVIDENCE_MAX_CASES
from kavi.verdicts import GATE_DIFFERENTIAL, GateResult

# A generated input the candidate could not finish is a counterexample only where the independent implementation
# answered it fast: the candidate had at least SLOW_MIN_S on it and at least SLOW_FACTOR times what the independent
# took (without an independent implementation, an input may simply be hard: the budget just ends the run).
SLOW_MIN_S = 1.0
SLOW_FACTOR = 20
# Each generated input (and each run of the independent implementation) gets at most this much of the budget: one
# input hard for both no longer spends it all and hides the inputs after it. At least SLOW_MIN_S, so an input the
# candidate cannot finish within it can still be judged too slow beside a fast independent answer.
GENERATED_CASE_CAP_S = 1.0
MAX_COUNTEREXAMPLES = 5
MAX_MESSAGES = 10
VALUE_CHARS = 240
DECLARED = ("rejected", "fixture")  # error kinds that put an input outside the skill's domain
STOPPED = ("budget", "cap")  # the time budget was spent; the input's own cap (GENERATED_CASE_CAP_S) was reached


@dataclass(frozen=True)
class EvidenceConfig:
    """Whether and how far the forge looks beyond the holdouts. `skipped_reason` is what an OMITTED verdict says
    when `enabled` is False (without one, the omission counts as a failure, like any reasonless omission).
    `seed` None derives the seed from the proposal, so a proposal's generated inputs are the same every time."""

    enabled: bool = True
    skipped_reason: str = ""
    max_cases: int = EVIDENCE_MAX_CASES
    time_budget_s: float = EVIDENCE_BUDGET_S
    seed: int | None = None


def evidence_seed(proposal: Proposal, config: EvidenceConfig) -> int:
    if config.seed is not None:
        return config.seed
    return int.from_bytes(hashlib.sha256(proposal.canonical_json().encode()).digest()[:8], "big")


@dataclass(frozen=True)
class IndependentEvidence:
    """What the independent implementation contributed: its results on the generated cases (by generated index)
    when `used`, else why not."""

    sha256: str
    label: str
    used: bool
    reason: str
    results: dict[int, dict[str, Any]] = field(default_factory=dict)

    def to_details(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "label": self.label, "used": self.used, "reason": self.reason}


def independent_evidence(proposal: Proposal, source: bytes, label: str, run: CaseRun | None,
                         refused: str = "") -> IndependentEvidence:
    """Judge the independent implementation's own run (examples, holdout examples, then each generated case once):
    it is evidence only when it ran and passed every example and holdout example."""
    digest = hashlib.sha256(source).hexdigest()
    if refused:
        return IndependentEvidence(digest, label, False, refused)
    if run is None:
        return IndependentEvidence(digest, label, False, "the independent implementation did not run")
    if run.failure is not None:
        return IndependentEvidence(digest, label, False,
                                   f"the independent implementation's run failed ({run.describe('independent')}); "
                                   "not used")
    shown = len(proposal.examples)
    hidden = len(proposal.holdout_examples)
    if not run.complete_through(shown + hidden):
        return IndependentEvidence(digest, label, False, "the independent implementation did not finish the "
                                   "examples; not used")
    verdict = judge_examples(proposal, [run.results[i] for i in range(shown + hidden)])
    shown_failed = int(verdict.details.get("examples_failed", 0))
    hidden_failed = int(verdict.details.get("holdout_failed", 0))
    if shown_failed or hidden_failed:
        parts = []
        if shown_failed:
            parts.append(f"{shown_failed} of {shown} example(s)")
        if hidden_failed:
            parts.append(f"{hidden_failed} of {hidden} holdout example(s)")
        # Counts only: the builder sees this reason, and it must learn nothing of a holdout.
        return IndependentEvidence(digest, label, False,
                                   f"the independent implementation failed {' and '.join(parts)}; not used")
    base = shown + hidden
    results = {i - base: r for i, r in run.results.items() if i >= base}
    return IndependentEvidence(digest, label, True, "passed every example and holdout example", results)


# --- the output schema, as the contract means it ----------------------------------------------------------------


def output_problem(proposal: Proposal, output: Any) -> str | None:
    """Why `output` does not match the proposal's output fields, or None. The rules are FieldSpec's: a field that is
    not required may be missing or null (a pydantic default of None dumps as null); a `| None` field may be null or
    missing, as an example's input may leave one out; extra fields are the skill's own business (only the declared
    ones are compared)."""
    if not isinstance(output, dict):
        return f"the output is {type(output).__name__}, not an object"
    for spec in proposal.outputs:
        ftype = parse_type(spec.type)
        if spec.name not in output:
            if spec.required and not ftype.optional:
                return f"the required field {spec.name!r} is missing"
            continue
        value = output[spec.name]
        if value is None and (ftype.optional or not spec.required or ftype.base == "json"):
            continue
        if value is None:
            return f"the field {spec.name!r} is null, but its type is {spec.type}"
        if ftype.base == "list":
            ok = isinstance(value, list) and all(primitive_matches(ftype.item or "json", v) for v in value)
        elif ftype.base == "dict":
            ok = isinstance(value, dict) and all(isinstance(k, str) and primitive_matches(ftype.item or "json", v)
                                                 for k, v in value.items())
        else:
            ok = primitive_matches(ftype.base, value)
        if not ok:
            return f"the field {spec.name!r} is {_show(value, 80)}, not {spec.type}"
    return None


def _pinned(proposal: Proposal) -> list[str]:
    """The output fields the spec pins: those some example or holdout gives an expected value for. A field no
    example pins (a generated id, a timestamp) is the skill's own: neither compared nor required to repeat."""
    named = {k for ex in (*proposal.examples, *proposal.holdout_examples) for k in ex.expected}
    pinned = [s.name for s in proposal.outputs if s.name in named]
    return pinned or [s.name for s in proposal.outputs]


def _declared(proposal: Proposal, output: dict[str, Any]) -> dict[str, Any]:
    """The pinned output fields of an output (what two implementations of the spec, or two runs, must agree on)."""
    fields = _pinned(proposal)
    return {name: output[name] for name in fields if name in output}


def _agree(proposal: Proposal, a: dict[str, Any], b: dict[str, Any]) -> bool:
    return equal(_declared(proposal, a), _declared(proposal, b))


def _same(proposal: Proposal, a: Any, b: Any) -> bool:
    """Two runs of the same input: the same pinned outputs."""
    if isinstance(a, dict) and isinstance(b, dict):
        return _agree(proposal, a, b)
    return equal(a, b)


# --- the verdict --------------------------------------------------------------------------------------------------


def _show(value: Any, limit: int = VALUE_CHARS) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kept(value: Any) -> Any:
    """A value for the details: itself when small, else its truncated JSON."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return value if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


@dataclass
class _Tally:
    ran: int = 0
    outside: int = 0
    compared: int = 0
    agreed: int = 0
    nondeterministic: int = 0
    invalid: int = 0
    exceptions: int = 0
    unjudged_exceptions: int = 0
    too_slow: int = 0
    budget_exhausted: bool = False
    cut: int = 0  # inputs cut at their own cap (GENERATED_CASE_CAP_S)
    counterexamples: list[dict[str, Any]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    case: dict[str, Any] | None = None  # the generated case being judged

    def add(self, kind: str, case_input: Any, candidate: Any, independent: Any, message: str) -> None:
        if len(self.counterexamples) < MAX_COUNTEREXAMPLES:
            # with the case's fixtures: a holdout made from it (kavi holdout add --counterexample) runs with them
            self.counterexamples.append(with_fixtures({"kind": kind, "input": _kept(case_input),
                                                       "candidate": _kept(candidate),
                                                       "independent": _kept(independent)}, self.case))
        self.messages.append(message)


def _error(entry: dict[str, Any]) -> str:
    return str(entry.get("error") or "an error")[:200]


def _judge_case(proposal: Proposal, t: _Tally, case_input: Any, first: dict[str, Any], second: dict[str, Any],
                other: dict[str, Any] | None) -> None:
    shown = _show(case_input)
    if other is not None and not other.get("ran"):
        t.outside += 1  # the independent implementation rejects this input: outside the spec's domain
        return
    ran1, ran2 = bool(first.get("ran")), bool(second.get("ran"))
    if ran1 != ran2 or (ran1 and not _same(proposal, first.get("output"), second.get("output"))):
        t.nondeterministic += 1
        one = first.get("output") if ran1 else f"<{_error(first)}>"
        two = second.get("output") if ran2 else f"<{_error(second)}>"
        t.add("nondeterministic", case_input, [one, two], other.get("output") if other else None,
              f"on input {shown} your skill returned different outputs for the same input: {_show(one)} "
              f"then {_show(two)}")
        return
    if not ran1:
        kind = str(first.get("error_kind") or "raised")
        if other is not None:
            t.compared += 1
            t.exceptions += 1
            t.add("exception", case_input, f"<{_error(first)}>", other.get("output"),
                  f"on input {shown} your skill raised {_error(first)}; an independent implementation of the same "
                  f"spec returned {_show(other.get('output'))}")
        elif kind in DECLARED:
            t.outside += 1  # a declared rejection: the skill says the input is outside its domain
        elif kind == "output":
            t.invalid += 1
            t.add("invalid_output", case_input, f"<{_error(first)}>", None,
                  f"on input {shown} your skill's output is too large: {_error(first)}")
        else:
            # Without an oracle, an exception on a generated input cannot be told from an input outside the spec's
            # domain (an empty list where the spec means a non-empty one, a missing positional argument): counting it
            # as a failure would refuse honest skills.
            # It is counted and shown, never a counterexample; with an independent implementation that returned a
            # value on the same input, it is one (above).
            t.outside += 1
            t.unjudged_exceptions += 1
        return
    output = first.get("output")
    problem = output_problem(proposal, output)
    if problem is not None:
        t.invalid += 1
        t.add("invalid_output", case_input, output, other.get("output") if other else None,
              f"on input {shown} your skill's output does not match the output schema: {problem}")
        return
    if other is None:
        return
    t.compared += 1
    if isinstance(output, dict) and isinstance(other.get("output"), dict) and _agree(proposal, output,
                                                                                     other["output"]):
        t.agreed += 1
        return
    mine = _declared(proposal, output) if isinstance(output, dict) else output
    t.add("disagreement", case_input, output, other.get("output"),
          f"on input {shown} your skill returned {_show(mine)}; "
          f"an independent implementation of the same spec returned {_show(other.get('output'))}")


def _judge_stopped(t: _Tally, case_input: Any, first: dict[str, Any] | None, second: dict[str, Any] | None,
                   other: dict[str, Any] | None) -> None:
    """The budget stopped the candidate on this input: a counterexample when the independent implementation
    answered it in a small fraction of the time the candidate had."""
    stopped = next((e for e in (first, second) if e is not None and e.get("error_kind") in STOPPED), None)
    if stopped is None or other is None or not other.get("ran"):
        return
    given = float(stopped.get("ms") or 0.0) / 1000
    took = other.get("ms")
    if not isinstance(took, int | float) or given < SLOW_MIN_S or given < SLOW_FACTOR * float(took) / 1000:
        return
    t.too_slow += 1
    t.add("too_slow", case_input, f"<did not finish in {given:.1f} s>", other.get("output"),
          f"on input {_show(case_input)} your skill did not finish in {given:.1f} s; an independent implementation "
          f"of the same spec returned {_show(other.get('output'))} in {float(took):.0f} ms")


def differential_gate(proposal: Proposal, config: EvidenceConfig, generated: list[dict[str, Any]],
                      candidate: CaseRun | None, independent: IndependentEvidence | None, *, seed: int,
                      generation_note: str = "", duration_s: float = 0.0) -> GateResult:
    """The verdict on the generated cases. `candidate` is the acceptance run, whose cases after the examples and
    holdouts are the generated ones, each twice in a row."""
    details: dict[str, Any] = {"generated": len(generated), "ran": 0, "outside_domain": 0, "compared": 0,
                               "agreed": 0, "agreement_rate": None, "determinism_failures": 0,
                               "invalid_outputs": 0, "exceptions": 0, "too_slow": 0, "counterexamples": [],
                               "independent": independent.to_details() if independent else None, "seed": seed,
                               "budget_exhausted": False}
    if not config.enabled:
        return GateResult(GATE_DIFFERENTIAL, Verdict.OMITTED, config.skipped_reason, 0.0, [], details)
    if generation_note:
        details["generation"] = generation_note
    if not generated:
        why = f": {generation_note}" if generation_note else ""
        return GateResult(GATE_DIFFERENTIAL, Verdict.OMITTED, f"no input beyond the examples could be generated{why}",
                          duration_s, [], details)
    if candidate is None or candidate.failure is not None:
        return GateResult(GATE_DIFFERENTIAL, Verdict.OMITTED,
                          "not judged: the skill did not run its examples (see the acceptance gate)", duration_s, [],
                          details)
    base = len(proposal.examples) + len(proposal.holdout_examples)
    usable = independent if independent is not None and independent.used else None
    t = _Tally()
    for g, case in enumerate(generated):
        t.case = case
        first = candidate.results.get(base + 2 * g)
        second = candidate.results.get(base + 2 * g + 1)
        kinds = (first.get("error_kind") if first else None, second.get("error_kind") if second else None)
        if first is None or "budget" in kinds or (second is None and first.get("error_kind") != "cap"):
            t.budget_exhausted = True
            _judge_stopped(t, case.get("input"), first, second, usable.results.get(g) if usable else None)
            break
        if "cap" in kinds:  # cut at its own cap: too slow where the independent answered fast, else undecided
            t.cut += 1
            _judge_stopped(t, case.get("input"), first, second, usable.results.get(g) if usable else None)
            continue
        assert second is not None
        t.ran += 1
        other = usable.results.get(g) if usable is not None else None
        if other is not None and other.get("error_kind") in STOPPED:
            other = None
        _judge_case(proposal, t, case.get("input"), first, second, other)
    if t.ran + t.cut < len(generated):
        t.budget_exhausted = True
    rate = round(t.agreed / t.compared, 4) if t.compared else None
    details.update(ran=t.ran, outside_domain=t.outside, compared=t.compared, agreed=t.agreed, agreement_rate=rate,
                   determinism_failures=t.nondeterministic, invalid_outputs=t.invalid, exceptions=t.exceptions,
                   unjudged_exceptions=t.unjudged_exceptions,
                   too_slow=t.too_slow, counterexamples=t.counterexamples, budget_exhausted=t.budget_exhausted,
                   cut_at_cap=t.cut)
    summary = f"{len(generated)} generated inputs: "
    if usable is not None:
        summary += f"{t.compared} compared, {t.agreed} agreed ({(rate or 0.0) * 100:.0f}%)"
    else:
        summary += f"{t.ran} ran"
    summary += f", {t.outside} outside the domain"
    if t.cut:
        summary += f", {t.cut} cut at {GENERATED_CASE_CAP_S:g} s"
    if t.budget_exhausted:
        summary += f"; the time budget stopped the run after {t.ran}"
    if usable is None:
        summary += "; no independent implementation" + (f" ({independent.reason})" if independent else "")
    messages = t.messages[:MAX_MESSAGES]
    if len(t.messages) > MAX_MESSAGES:
        messages.append(f"… {len(t.messages) - MAX_MESSAGES} more counterexample(s)")
    if t.messages:
        return GateResult(GATE_DIFFERENTIAL, Verdict.FAILED, f"{len(t.messages)} counterexample(s); {summary}",
                          duration_s, messages, details)
    return GateResult(GATE_DIFFERENTIAL, Verdict.PASSED, summary, duration_s, [], details)
