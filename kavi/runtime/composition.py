"""A composition runs a decomposed parent as a chain of its children, each step mapping from one document
`{"input": <the parent's input>, "steps": [<output of step 0>, ...]}`; the sandbox and `kavi run` both run it here."""

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kavi.proposals.values import value_matches
from kavi.runtime.steps import ChainStep, build_step_input, resolve_path

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
