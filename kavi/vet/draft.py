"""`kavi vet --draft`: a proposal skeleton from the function's signature and the SKILL.md description.

The skeleton says what the source claims (name, inputs, the output keys its `return {...}` literals use); a person
completes it with what the skill must do: examples, holdouts, the output types. Nothing of the source is trusted
for that, which is why the examples are left empty and the file does not validate until they are written.
"""

import ast
from typing import Any

import yaml

from kavi.vet.source import VetSource

_PRIMITIVES = {"str": "str", "int": "int", "float": "float", "bool": "bool"}


def _field_type(node: ast.expr | None) -> str:
    """The proposal type of an annotation, `json` where the grammar has no closer one."""
    if node is None:
        return "json"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [node.left, node.right]
        if any(isinstance(s, ast.Constant) and s.value is None for s in sides):
            other = next(s for s in sides if not (isinstance(s, ast.Constant) and s.value is None))
            inner = _field_type(other)
            return inner if inner == "json" else f"{inner} | None"
        return "json"
    if isinstance(node, ast.Name):
        return _PRIMITIVES.get(node.id, "json")
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        items = [_field_type(a) for a in args]
        if node.value.id in ("list", "List", "Sequence") and len(items) == 1 and items[0] in _PRIMITIVES.values():
            return f"list[{items[0]}]"
        if node.value.id in ("dict", "Dict", "Mapping") and len(items) == 2 and items[0] == "str" \
                and items[1] in (*_PRIMITIVES.values(), "json"):
            return f"dict[str, {items[1]}]"
    return "json"


def _output_keys(fn: ast.FunctionDef) -> list[str]:
    keys: list[str] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
            for k in node.value.keys:
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value not in keys:
                    keys.append(k.value)
    return keys


def draft_proposal(source: VetSource) -> str:
    """The proposal skeleton as YAML, with comments on what a person must still write."""
    tree = ast.parse(source.code)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == source.skill_name]
    if not fns:
        raise ValueError(f"{source.code_path}: no top-level function named {source.skill_name!r} to draft from")
    fn = fns[-1]
    defaults = dict(zip([a.arg for a in reversed(fn.args.args)], reversed(fn.args.defaults), strict=False))
    inputs: list[dict[str, Any]] = []
    for a in [*fn.args.args, *fn.args.kwonlyargs]:
        field: dict[str, Any] = {"name": a.arg, "type": _field_type(a.annotation), "description": "TODO"}
        if a.arg in defaults:
            field["required"] = False
        inputs.append(field)
    description = source.description or ast.get_docstring(fn) or ast.get_docstring(tree) or "TODO: what it does"
    doc = {
        "name": source.skill_name,
        "description": " ".join(description.split())[:4000],
        "side_effect_class": "READ_ONLY",
        "inputs": inputs,
        "outputs": [{"name": k, "type": "json", "description": "TODO: its type"} for k in _output_keys(fn)]
        or [{"name": "TODO", "type": "json"}],
        "examples": [],
        "holdout_examples": [],
    }
    head = (f"# A proposal drafted by `kavi vet --draft` from {source.code_path} ({source.origin}).\n"
            "# Complete it before `kavi vet`: the output types, the descriptions marked TODO, and examples and\n"
            "# holdout_examples of what the skill must do ({input: {...}, expected: {...}}), written from the task,\n"
            "# not from what the code does.\n")
    return head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
