"""The forge's side of a composition: check the model's composition against the parent and its children, and write
the trusted document (run by kavi.runtime.composition)."""

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kavi.proposals.model import FieldSpec, Proposal
from kavi.runtime.composition import COMPOSITION_KIND, Composition, CompositionError
from kavi.runtime.steps import placeholders


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
        for path in placeholders(step.input_template or {}):
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


