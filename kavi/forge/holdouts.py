"""A person adds a holdout example to a proposal: the right answer for an input, often one where the candidate and the
independent implementation disagreed (a counterexample of the latest verification).

The holdout is checked against the proposal's fields (names and types), appended to `holdout_examples`, and the new
spec is recorded as a revision with who added it and when. The changed spec digest invalidates the cached
independent implementation; the next `kavi forge NAME` verifies against the new holdout, and an independent that
fails it is discarded as evidence.
"""

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from kavi.forge.context import ForgeContext
from kavi.ledger.records import RevisionOutcome
from kavi.proposals.model import Example, Proposal, ProposalError, parse_proposal
from kavi.proposals.values import value_matches
from kavi.routing.complexity import score_complexity
from kavi.verdicts import COUNTEREXAMPLE_GATES


class HoldoutError(ProposalError):
    """A holdout that cannot be added; the message says why, on one line."""


@dataclass(frozen=True)
class Counterexample:
    number: int  # 1-based, as the report lists them
    input: dict[str, Any] | None  # None when the report holds it truncated
    candidate: Any
    independent: Any
    kind: str
    build_id: str
    fixtures: dict[str, Any] | None = None  # the handle fixtures its input ran with; None: too large to keep


def parse_json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise HoldoutError(f"{what} is not valid JSON: {err.msg} at column {err.colno}") from None
    if not isinstance(value, dict):
        raise HoldoutError(f"{what} must be a JSON object of field values, not {type(value).__name__}")
    return value


def check_holdout(proposal: Proposal, input_data: dict[str, Any], expected: dict[str, Any]) -> None:
    """Field names and types against the proposal; HoldoutError naming the first problem."""
    inputs = {f.name: f for f in proposal.inputs}
    outputs = {f.name: f for f in proposal.outputs}
    unknown = sorted(set(input_data) - set(inputs))
    if unknown:
        raise HoldoutError(f"{proposal.name}: unknown input field(s) {', '.join(unknown)} (inputs: "
                           f"{', '.join(inputs)})")
    missing = sorted(n for n, f in inputs.items() if f.required and not f.type.endswith("| None")
                     and n not in input_data)
    if missing:
        raise HoldoutError(f"{proposal.name}: the input lacks required field(s) {', '.join(missing)}")
    if not expected:
        raise HoldoutError(f"{proposal.name}: --expected must name at least one output field "
                           f"({', '.join(outputs)})")
    unknown = sorted(set(expected) - set(outputs))
    if unknown:
        raise HoldoutError(f"{proposal.name}: unknown output field(s) {', '.join(unknown)} (outputs: "
                           f"{', '.join(outputs)})")
    for label, values, fields in (("input", input_data, inputs), ("expected", expected, outputs)):
        for key, value in values.items():
            if not value_matches(fields[key].type, value):
                shown = json.dumps(value, default=str)
                raise HoldoutError(f"{proposal.name}: {label} field {key!r} must be {fields[key].type}, got "
                                   f"{shown[:60] + ('…' if len(shown) > 60 else '')}")
    taken = [ex.input for ex in (*proposal.examples, *proposal.holdout_examples)]
    if input_data in taken:
        raise HoldoutError(f"{proposal.name}: an example or holdout with this input is already in the proposal")


def with_holdout(proposal: Proposal, input_data: dict[str, Any], expected: dict[str, Any],
                 fixtures: dict[str, Any] | None = None) -> Proposal:
    """The proposal with one more holdout; `fixtures` the handle fixtures (vault files, HTTP responses, secrets) its
    input runs with, as the case it came from ran."""
    check_holdout(proposal, input_data, expected)
    data = proposal.model_dump(mode="json")
    try:
        example = Example(input=input_data, expected=expected, **(fixtures or {}))
    except ValidationError as err:
        raise HoldoutError(f"{proposal.name}: the holdout's fixtures are refused: "
                           f"{err.errors()[0].get('msg', err)}") from None
    data["holdout_examples"] = [*data.get("holdout_examples", []), example.model_dump(mode="json")]
    try:
        return parse_proposal(data, proposal.name)
    except ProposalError as err:
        raise HoldoutError(str(err).splitlines()[0]) from None


def counterexamples(ctx: ForgeContext, name: str) -> list[Counterexample]:
    """The counterexamples of NAME's latest verification (its differential gate), numbered from 1."""
    ctx.records.require_proposal(name)
    build = ctx.records.latest_build(name)
    if build is None:
        return []
    by_gate = {r["gate"]: r for r in ctx.records.gate_results(build.build_id)}
    found = [c for gate in COUNTEREXAMPLE_GATES if gate in by_gate
             for c in by_gate[gate]["details"].get("counterexamples") or [] if isinstance(c, dict)]
    # An input too long for the report is kept there as truncated JSON text, not as the input itself.
    return [Counterexample(i, c.get("input") if isinstance(c.get("input"), dict) else None, c.get("candidate"),
                           c.get("independent"), str(c.get("kind", "")), build.build_id, report_fixtures(c))
            for i, c in enumerate(found, 1)]


def report_fixtures(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The fixtures a report's question or counterexample carries: {} when it ran with none, None when they were
    too large to keep (kavi.gates.values.case_fixtures)."""
    if "fixtures" not in entry:
        return {}
    given = entry["fixtures"]
    return dict(given) if isinstance(given, dict) else None


def counterexample_input(ctx: ForgeContext, name: str, number: int) -> dict[str, Any]:
    return counterexample_case(ctx, name, number)[0]


def counterexample_case(ctx: ForgeContext, name: str, number: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(input, handle fixtures) of counterexample `number` of NAME's latest verification."""
    found = counterexamples(ctx, name)
    if not found:
        raise HoldoutError(f"{name}: the latest verification has no counterexample; give the input with --input JSON")
    if not 1 <= number <= len(found):
        raise HoldoutError(f"{name}: counterexample {number} does not exist; the latest verification has "
                           f"{len(found)} (1 to {len(found)})")
    chosen = found[number - 1]
    if chosen.input is None:
        raise HoldoutError(f"{name}: counterexample {number}'s input is too long to be kept whole in the report; "
                           "give it with --input JSON")
    if chosen.fixtures is None:
        raise HoldoutError(f"{name}: counterexample {number} ran with fixtures too large to be kept in the report; "
                           "add it to the proposal's holdout_examples with its fixtures and propose the new spec")
    return chosen.input, chosen.fixtures


def add_holdout(ctx: ForgeContext, name: str, input_data: dict[str, Any], expected: dict[str, Any], by: str,
                fixtures: dict[str, Any] | None = None) -> tuple[Proposal, RevisionOutcome]:
    """Append the holdout and record the new spec as a revision by `by`, now."""
    if not by.strip():
        raise HoldoutError("a holdout needs a name: --by WHO")
    with ctx.records.session():
        proposal = ctx.records.require_proposal(name).proposal
        new = with_holdout(proposal, input_data, expected, fixtures)
        outcome = ctx.records.propose_revision(new, source_path=None, complexity=score_complexity(new).score,
                                               actor=by.strip())
    return new, outcome
