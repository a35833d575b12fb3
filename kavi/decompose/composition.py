"""A composition: how a decomposed parent is computed from its children, as a chain of child skills.

It reuses the chain mechanism of `kavi chain` (kavi.runtime.chain): each step is a `ChainStep` (literal
`input`, `input_template` placeholders, `from_prev` dot paths, with the chain's own validation), and each step's
input is built by `build_step_input`. The difference is the source a step maps from: not "the previous step" but
one document, `{"input": <the parent's input>, "steps": [<output of step 0>, ...]}`, so a step can take fields of
the parent's input and of any earlier step (`input.text`, `steps.0.emails`). The parent's output is mapped the same
way (`output`: parent output field -> dot path).

Everything here is pure: the same code validates the model's answer, runs the composition inside the acceptance
sandbox, and runs the trusted composition for `kavi run PARENT`.
"""

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kavi.proposals.model import FieldSpec, Proposal
from kavi.runtime.chain import ChainStep, _placeholders, build_step_input, resolve_path

COMPOSITION_KIND = "KAVI_COMPOSITION"
MAX_STEPS = 10


class CompositionError(ValueError):
    """A composition that cannot be used; one line a person can act on."""


class Composition(BaseModel):
    """The model's composition: the steps (child skills) and the parent's output mapping."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: list[ChainStep] = Field(min_length=1, max_length=MAX_STEPS)
    output: dict[str, str] = Field(min_length=1)


def _first_error(err: ValidationError) -> str:
    e = err.errors(include_url=False, include_input=False)[0]
    loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
    msg = str(e["msg"]).removeprefix("Value error, ")
    return f"{loc}: {msg}"


def parse_composition(data: Any) -> Composition:
    if not isinstance(data, dict):
        raise CompositionError(f"the composition must be an object, got {type(data).__name__}")
    try:
        return Composition.model_validate(data)
    except ValidationError as err:
        raise CompositionError(f"the composition is not valid: {_first_error(err)}") from None


def _required(fields: Sequence[FieldSpec]) -> set[str]:
    return {f.name for f in fields if f.required and not f.type.replace(" ", "").endswith("|None")}


def _check_path(path: str, where: str, parent_inputs: set[str], step_outputs: Sequence[set[str]]) -> None:
    """A source path must start at the parent's input (`input.FIELD...`) or an earlier step (`steps.N.FIELD...`)."""
    parts = path.strip().split(".")
    if parts[0] == "input":
        if len(parts) < 2 or parts[1] not in parent_inputs:
            known = ", ".join(sorted(parent_inputs))
            raise CompositionError(f"{where}: {path!r} names no input field of the parent (its inputs: {known})")
        return
    if parts[0] == "steps":
        if len(parts) < 3 or not parts[1].isdigit() or int(parts[1]) >= len(step_outputs):
            raise CompositionError(f"{where}: {path!r} must name an earlier step as steps.N.FIELD "
                                   f"(N from 0 to {len(step_outputs) - 1})" if step_outputs
                                   else f"{where}: {path!r} refers to a step, but there is no earlier step")
        outs = step_outputs[int(parts[1])]
        if parts[2] not in outs:
            raise CompositionError(f"{where}: {path!r} names no output field of step {parts[1]} "
                                   f"(its outputs: {', '.join(sorted(outs))})")
        return
    raise CompositionError(f"{where}: {path!r} must start with input. (the parent's input) or steps.N. "
                           "(an earlier step's output)")


def validate_composition(comp: Composition, parent: Proposal, children: Mapping[str, Proposal]) -> None:
    """Every step names a child, maps only known fields, and sets every required input of its child; every child is
    used; the output mapping covers the parent's required outputs with fields that exist. CompositionError if not."""
    parent_inputs = {f.name for f in parent.inputs}
    step_outputs: list[set[str]] = []
    used: set[str] = set()
    for i, step in enumerate(comp.steps):
        where = f"composition step {i} ({step.skill})"
        child = children.get(step.skill)
        if child is None:
            raise CompositionError(f"{where}: {step.skill!r} is not one of the children "
                                   f"({', '.join(sorted(children))})")
        if step.from_step is not None:
            raise CompositionError(f"{where}: from_step is not used in a composition; map from steps.N.FIELD")
        used.add(step.skill)
        child_inputs = {f.name for f in child.inputs}
        given = set(step.input or {}) | set(step.input_template or {}) | set(step.from_prev)
        unknown = given - child_inputs
        if unknown:
            raise CompositionError(f"{where}: sets fields the child does not have: {', '.join(sorted(unknown))}")
        missing = _required(child.inputs) - given
        if missing:
            raise CompositionError(f"{where}: leaves required inputs of the child unset: "
                                   f"{', '.join(sorted(missing))}")
        for target, path in step.from_prev.items():
            _check_path(path, f"{where} from_prev[{target!r}]", parent_inputs, step_outputs)
        for path in _placeholders(step.input_template or {}):
            _check_path(path, f"{where} input_template", parent_inputs, step_outputs)
        step_outputs.append({f.name for f in child.outputs})
    unused = sorted(set(children) - used)
    if unused:
        raise CompositionError(f"the composition does not use the children: {', '.join(unused)}")
    parent_outputs = {f.name for f in parent.outputs}
    unknown_out = set(comp.output) - parent_outputs
    if unknown_out:
        raise CompositionError(f"composition output: sets fields the parent does not have: "
                               f"{', '.join(sorted(unknown_out))}")
    missing_out = _required(parent.outputs) - set(comp.output)
    if missing_out:
        raise CompositionError(f"composition output: leaves required outputs of the parent unset: "
                               f"{', '.join(sorted(missing_out))}")
    for target, path in comp.output.items():
        _check_path(path, f"composition output[{target!r}]", parent_inputs, step_outputs)


class StepFailed(RuntimeError):
    """A step of a running composition failed: which step, which child, why."""


def run_composition(doc: Mapping[str, Any], parent_input: Mapping[str, Any],
                    call: Callable[[int, str, dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """Run a composition document: `call(index, child, input)` runs one child and returns its output (or raises);
    the parent's output is mapped from the collected outputs. Mapping errors raise StepFailed."""
    comp = parse_composition({"steps": doc.get("steps"), "output": doc.get("output")})
    source: dict[str, Any] = {"input": dict(parent_input), "steps": []}
    for index, step in enumerate(comp.steps):
        try:
            built = build_step_input(step, source)
        except ValueError as exc:  # ChainMappingError is a ValueError
            raise StepFailed(f"step {index} ({step.skill}): {exc}") from None
        source["steps"].append(call(index, step.skill, built))
    try:
        return {field: resolve_path(source, path.strip()) for field, path in comp.output.items()}
    except ValueError as exc:
        raise StepFailed(f"output mapping: {exc}") from None


def composition_doc(parent: Proposal, comp: Composition, children: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The trusted artifact of a decomposed parent: the composition, the parent's schema (so the runtime can check
    input and output without the ledger), and each child pinned to the trusted version and hash it was verified
    with."""
    return {
        "kind": COMPOSITION_KIND,
        "format": 1,
        "parent": parent.name,
        "side_effect_class": parent.side_effect_class.value,
        "required_secrets": list(parent.required_secrets),
        "inputs": [f.model_dump(mode="json") for f in parent.inputs],
        "outputs": [f.model_dump(mode="json") for f in parent.outputs],
        "steps": [s.model_dump(mode="json", exclude_none=True) for s in comp.steps],
        "output": dict(comp.output),
        "children": {k: dict(v) for k, v in sorted(children.items())},
    }


def doc_bytes(doc: Mapping[str, Any]) -> bytes:
    return (json.dumps(doc, sort_keys=True, indent=2) + "\n").encode()


def parse_doc(data: bytes) -> dict[str, Any] | None:
    """The composition document in `data`, or None when the bytes are not one (a Python skill, say). A skill that
    passed the gates defines a class, so it can never parse as a JSON object."""
    head = data.lstrip()[:1]
    if head != b"{":
        return None
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or doc.get("kind") != COMPOSITION_KIND:
        return None
    return doc


def check_fields(fields: Sequence[Mapping[str, Any]], values: Mapping[str, Any], what: str) -> list[str]:
    """Problems of `values` against field specs (unknown, missing required, wrong type), one line each."""
    from kavi.proposals.values import value_matches

    specs = {str(f["name"]): f for f in fields}
    problems = [f"{what}.{k}: not a field" for k in values if k not in specs]
    for name, f in specs.items():
        optional = str(f["type"]).replace(" ", "").endswith("|None")
        if name not in values:
            if f.get("required", True) and not optional:
                problems.append(f"{what}.{name}: field required")
            continue
        if not value_matches(str(f["type"]), values[name]):
            problems.append(f"{what}.{name}: expected {f['type']}")
    return problems
