"""The questions the evidence leaves open (the adequacy gate's, kavi.gates.adequacy), and a person's answers.

A question is an input on which the candidate and a mutant of it that passed every check answer differently (or on
which the candidate raises an exception it did not declare, or, when the candidate gave one answer to every input
tried, a request for an input whose answer differs). A person answers with the right output, which becomes a
holdout (kavi.forge.holdouts: the spec's new revision invalidates the cached independent implementation, and the next
verification judges the candidate on it), or says the input is outside the skill's domain (recorded in the spec, so
no generated input or probe asks it again). Until then the question is open, and the ceremony level decides what
that means for promotion (kavi.forge.promote).
"""

import json
from dataclasses import dataclass
from typing import Any

from kavi.forge.context import ForgeContext
from kavi.forge.holdouts import HoldoutError, add_holdout, report_fixtures
from kavi.gates.boundary import canonical
from kavi.gates.values import equal
from kavi.ledger.records import RevisionOutcome
from kavi.proposals.model import Proposal, ProposalError, parse_proposal
from kavi.routing.complexity import score_complexity
from kavi.verdicts import GATE_ADEQUACY


@dataclass(frozen=True)
class Question:
    number: int  # 1-based, as the report lists them
    # "mutant": a variant answers differently; "crash": the candidate raises; "uniform": the candidate gave one
    # answer to every input tried (the question asks for an input whose answer differs, or the answer for `input`)
    kind: str
    input: dict[str, Any] | None  # None when the report holds it truncated (or a uniform question has no suggestion)
    candidate: Any
    alternatives: list[Any]
    mutants: list[str]
    build_id: str
    answered: bool
    fixtures: dict[str, Any] | None = None  # the handle fixtures its input ran with ({}: none; None: too large)
    inputs_tried: int = 0  # a uniform question's: how many inputs got the one answer
    shown: Any = None  # a uniform question's: the one answer every example and holdout shows

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "kind": self.kind, "input": self.input, "candidate": self.candidate,
                "alternatives": self.alternatives, "mutants": self.mutants, "build_id": self.build_id,
                "answered": self.answered,
                # The fixtures its input ran with; null when too large to keep (an input without any has no key).
                **({"fixtures": self.fixtures} if self.fixtures != {} else {}),
                **({"shown": self.shown, "inputs_tried": self.inputs_tried} if self.kind == "uniform" else {})}

    def ask(self) -> str:
        """The question as a person reads it."""
        shown = json.dumps(self.input, sort_keys=True, ensure_ascii=False)[:200] + self._with()
        if self.kind == "uniform":
            return self._ask_uniform(shown)
        if self.kind == "crash":
            return (f"for input {shown} the skill {str(self.candidate).strip('<>')}: is this input outside its domain, "
                    "or what should it return?")
        others = " or ".join(json.dumps(a, sort_keys=True, ensure_ascii=False, default=str)[:120]
                             for a in self.alternatives) or "something else"
        return (f"for input {shown} the skill returns {json.dumps(self.candidate, sort_keys=True, default=str)[:120]}; "
                f"a variant that passes every example returns {others}: which is right (or what is)?")

    def _ask_uniform(self, shown: str) -> str:
        def js(value: Any) -> str:
            return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)[:120]

        theirs = f"; an independent implementation returns {js(self.alternatives[0])}" if self.alternatives else ""
        give = "give an input whose answer differs (--input JSON --expected JSON)"
        if self.shown is None or self.shown == self.candidate:
            text = (f"the skill returns {js(self.candidate)} for every input tried ({self.inputs_tried}), as every "
                    "example expects: the evidence cannot tell it from a skill that always returns that. ")
            if self.input is None:
                return text + give[0].upper() + give[1:] + "."
            if theirs:
                return text + f"For input {shown} it does{theirs}: which is right (or what is)?"
            return text + f"{give[0].upper()}{give[1:]}, or the answer for input {shown}."
        return (f"every example and holdout expects {js(self.shown)}: the evidence cannot tell the skill from one "
                f"that always returns that. For input {shown} the skill returns {js(self.candidate)}{theirs}: which "
                f"is right (or what is)? Or {give}.")

    def _with(self) -> str:
        """What the input ran with besides itself (the fixtures of the example it came from)."""
        if self.fixtures is None:
            return " (with fixtures too large to show)"
        parts = [f"{label} {', '.join(sorted(self.fixtures[key]))[:120]}" for key, label in
                 (("vault_files", "vault files"), ("http_responses", "HTTP responses for"), ("secrets", "secrets"))
                 if self.fixtures.get(key)]
        return f" (with {'; '.join(parts)})" if parts else ""


def settled_inputs(proposal: Proposal) -> set[str]:
    """The inputs the spec decides already: its examples, holdouts and the inputs declared outside its domain."""
    return ({canonical(ex.input) for ex in (*proposal.examples, *proposal.holdout_examples)}
            | {canonical(i) for i in proposal.outside_domain})


def questions(ctx: ForgeContext, name: str) -> list[Question]:
    """The questions of NAME's latest verification, numbered from 1, each marked answered when the current spec
    decides its input."""
    with ctx.records.session():  # one connection for the three reads (the status observation asks on every attempt)
        row = ctx.records.require_proposal(name)
        build = ctx.records.latest_build(name)
        results = ctx.records.gate_results(build.build_id) if build is not None else []
    if build is None:
        return []
    settled = settled_inputs(row.proposal)
    shown = [ex.expected for ex in (*row.proposal.examples, *row.proposal.holdout_examples)]
    for result in results:
        if result["gate"] != GATE_ADEQUACY:
            continue
        found = result["details"].get("questions") or []
        out: list[Question] = []
        for q in found:
            if not isinstance(q, dict):
                continue
            given = q.get("input") if isinstance(q.get("input"), dict) else None
            kind = str(q.get("kind") or "mutant")
            answered = given is not None and canonical(given) in settled
            one = q.get("shown", q.get("candidate"))
            if kind == "uniform":  # answered too once the spec shows an answer other than the one it showed
                answered = answered or _shows_another(shown, one)
            out.append(Question(int(q.get("number") or len(out) + 1), kind, given,
                                q.get("candidate"), list(q.get("alternatives") or []), list(q.get("mutants") or []),
                                build.build_id, answered, report_fixtures(q), int(q.get("inputs_tried") or 0),
                                one if kind == "uniform" else None))
        return out
    return []


def _shows_another(expected: list[dict[str, Any]], answer: Any) -> bool:
    """Whether an example or holdout expects, in the fields `answer` holds, something other than `answer`."""
    if not isinstance(answer, dict):
        return False
    return any(any(k in ex and not equal(ex[k], v) for k, v in answer.items()) for ex in expected)


def open_questions(ctx: ForgeContext, name: str) -> list[Question]:
    return [q for q in questions(ctx, name) if not q.answered]


def _chosen(ctx: ForgeContext, name: str, number: int, own_input: bool = False) -> Question:
    found = questions(ctx, name)
    if not found:
        raise HoldoutError(f"{name}: the latest verification left no question open")
    if not 1 <= number <= len(found):
        raise HoldoutError(f"{name}: question {number} does not exist; the latest verification has {len(found)} "
                           f"(1 to {len(found)})")
    chosen = found[number - 1]
    if own_input and chosen.kind != "uniform":
        raise HoldoutError(f"{name}: question {number} asks about its own input; --input answers a question that "
                           "asks for an input whose answer differs (kavi questions NAME)")
    if chosen.kind == "uniform" and chosen.input is None and not own_input:
        raise HoldoutError(f"{name}: question {number} asks for an input whose answer differs: give it with "
                           "--input JSON --expected JSON")
    if chosen.input is None and not own_input:
        raise HoldoutError(f"{name}: question {number}'s input is too long to be kept whole in the report; add the "
                           "answer with kavi holdout add NAME --input JSON --expected JSON --by WHO")
    if chosen.answered:
        raise HoldoutError(f"{name}: question {number} is answered already (the spec decides its input)")
    return chosen


def _fixtures_of(name: str, chosen: Question) -> dict[str, Any]:
    if chosen.fixtures is None:
        raise HoldoutError(f"{name}: question {chosen.number}'s input ran with fixtures too large to be kept in the "
                           "report; add the answer to the proposal's holdout_examples with its fixtures")
    return chosen.fixtures


def answer(ctx: ForgeContext, name: str, number: int, expected: dict[str, Any], by: str,
           input_data: dict[str, Any] | None = None) -> tuple[Question, Proposal, RevisionOutcome]:
    """Record a person's right output for question `number` as a new holdout of NAME; `input_data` the person's own
    input, for a question that asks for one whose answer differs (kind "uniform")."""
    chosen = _chosen(ctx, name, number, own_input=input_data is not None)
    given = input_data if input_data is not None else chosen.input
    assert given is not None
    # The holdout runs with the fixtures the question's input ran with (a vault's files, HTTP responses, secrets).
    proposal, outcome = add_holdout(ctx, name, given, expected, by, _fixtures_of(name, chosen))
    return chosen, proposal, outcome


def declare_outside(ctx: ForgeContext, name: str, number: int, by: str) -> tuple[Question, Proposal, RevisionOutcome]:
    """Record a person's word that question `number`'s input is outside NAME's domain (a new revision of the spec)."""
    if not by.strip():
        raise HoldoutError("an answer needs a name: --by WHO")
    chosen = _chosen(ctx, name, number)
    with ctx.records.session():
        current = ctx.records.require_proposal(name).proposal
        data = current.model_dump(mode="json")
        data["outside_domain"] = [*data.get("outside_domain", []), chosen.input]
        try:
            new = parse_proposal(data, name)
        except ProposalError as err:
            raise HoldoutError(str(err).splitlines()[0]) from None
        outcome = ctx.records.propose_revision(new, source_path=None, complexity=score_complexity(new).score,
                                               actor=by.strip())
    return chosen, new, outcome
