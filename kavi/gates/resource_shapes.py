"""The resource gate's input shapes: for each string or list input field, the values that grow (kavi.gates.resource
judges how the skill's time grows with them).

A string field grows as its first example's text repeated, as one repeated letter, as digits, and as near-matches of
the regular expressions the skill's source compiles: for each repetition early in a pattern, a long run of a
character it accepts after a prefix the pattern's first part matches, ending in a character that completes nothing
(what makes a backtracking engine try every start position). The characters a pattern names literally are repeated
too. A list field grows as its example's items in turn, as counting numbers (up and down) or numbered strings.

Inputs grow up to the bound the runtime's doors put on one call's input (kavi.proposals.bounds.RUN_INPUT_BOUNDS):
`kavi run` and `kavi serve` refuse anything larger, so nothing larger can reach a trusted skill.
"""

import ast
from typing import Any

from kavi.proposals.bounds import RUN_INPUT_BOUNDS
from kavi.proposals.model import Example, Proposal
from kavi.proposals.values import parse_type

# Room left in the input document for the other fields and the JSON around the grown one.
_ROOM = 4096
STRING_BOUND = min(RUN_INPUT_BOUNDS.max_string_chars, RUN_INPUT_BOUNDS.max_bytes) - _ROOM
LIST_BOUND = RUN_INPUT_BOUNDS.max_items
MAX_STRING_SHAPES = 8
MAX_LIST_SHAPES = 4
MAX_PATTERNS = 4
MAX_PUMPS_PER_PATTERN = 2
MAX_LITERAL_RUNS = 3
MAX_FIELDS = 4
_RE_CALLS = frozenset({"compile", "match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split"})
_TAILS = "!#~%"


# --- the regular expressions in the source ------------------------------------------------------------------------


def regex_literals(source: str) -> list[str]:
    """The patterns the source gives `re` functions: string literals, or module-level names bound to one."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = stmt.value.value
    found: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RE_CALLS
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):
            continue
        arg = node.args[0]
        text = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else \
            names.get(arg.id) if isinstance(arg, ast.Name) else None
        if text and text not in found:
            found.append(text)
    return found[:MAX_PATTERNS]


def _parse(pattern: str) -> Any:
    try:
        from re import _parser  # type: ignore[attr-defined]

        return _parser.parse(pattern)
    except Exception:  # not a pattern this Python reads: no shapes from it
        return None


def _category_char(name: str) -> str:
    return {"CATEGORY_DIGIT": "1", "CATEGORY_SPACE": " ", "CATEGORY_WORD": "a", "CATEGORY_NOT_DIGIT": "a",
            "CATEGORY_NOT_SPACE": "a", "CATEGORY_NOT_WORD": " "}.get(name, "a")


def _class_char(items: Any) -> str:
    """A character a character class accepts (its first member; a negated class: a letter)."""
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            return "a"
        if name == "LITERAL":
            return chr(av)
        if name == "RANGE":
            low, high = av
            return "a" if low <= ord("a") <= high else chr(low)
        if name == "CATEGORY":
            return _category_char(str(av))
    return "a"


def _sample(items: Any) -> str:
    """The shortest text the sequence `items` matches, roughly: literals, each repeat at its minimum."""
    out = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "IN":
            out.append(_class_char(av))
        elif name == "ANY":
            out.append("a")
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _high, sub = av
            out.append(_sample(sub) * min(int(low), 8))
        elif name == "SUBPATTERN":
            out.append(_sample(av[-1]))
        elif name == "BRANCH":
            out.append(_sample(av[1][0]) if av[1] else "")
    return "".join(out)


def _first_char(items: Any) -> str:
    text = _sample(items)
    if text:
        return text[0]
    for op, av in items:  # a repeat whose minimum is 0: the character it would take
        if str(op) in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            return _first_char(av[2])
    return "a"


def _flatten(items: Any) -> list[tuple[Any, Any]]:
    """The sequence with groups opened, so a repeat inside the first group counts as early in the pattern."""
    out: list[tuple[Any, Any]] = []
    for op, av in items:
        if str(op) == "SUBPATTERN":
            out += _flatten(av[-1])
        else:
            out.append((op, av))
    return out


def _literals(items: Any, out: list[str]) -> None:
    for op, av in items:
        name = str(op)
        if name == "LITERAL" and not chr(av).isalnum():
            out.append(chr(av))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _literals(av[2], out)
        elif name == "SUBPATTERN":
            _literals(av[-1], out)
        elif name == "BRANCH":
            for branch in av[1]:
                _literals(branch, out)


def pattern_shapes(pattern: str) -> list[dict[str, Any]]:
    """Near-matches of one pattern: for its first repetitions, the prefix before it, a run of a character it takes
    and a tail that completes nothing; then runs of the characters it names literally."""
    parsed = _parse(pattern)
    if parsed is None:
        return []
    tail = next((c for c in _TAILS if c not in pattern), "\u2603")
    shapes: list[dict[str, Any]] = []
    prefix = ""
    for op, av in _flatten(list(parsed)):
        if len(shapes) >= MAX_PUMPS_PER_PATTERN:
            break
        if str(op) in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and (av[1] is None or int(av[1]) > 1):
            unit = _first_char(av[2])
            shapes.append({"kind": "text", "prefix": prefix, "unit": unit, "tail": tail,
                           "label": f"near-match of /{_short(pattern)}/: {_show(prefix)}{_show(unit)}… then "
                                    f"{_show(tail)}"})
        prefix += _sample([(op, av)])
    literal: list[str] = []
    _literals(list(parsed), literal)
    for char in list(dict.fromkeys(literal))[:MAX_LITERAL_RUNS]:
        shapes.append({"kind": "text", "unit": char, "label": f"{_show(char)} repeated (named in /{_short(pattern)}/)"})
    return shapes


def _short(pattern: str, width: int = 40) -> str:
    return pattern if len(pattern) <= width else pattern[: width - 1] + "…"


def _show(text: str) -> str:
    return repr(text) if text else "''"


# --- the probes -----------------------------------------------------------------------------------------------------


def _base(proposal: Proposal, field: str, kind: type) -> Example:
    return next((ex for ex in proposal.examples if isinstance(ex.input.get(field), kind)), proposal.examples[0])


def _fixtures(ex: Example) -> dict[str, Any]:
    dumped = ex.model_dump(mode="json")
    return {"vault_files": dumped.get("vault_files") or {}, "http_responses": dumped.get("http_responses") or {},
            "secrets": dumped.get("secrets") or {}}


def _string_shapes(example_text: Any, patterns: list[str]) -> list[dict[str, Any]]:
    shapes: list[dict[str, Any]] = []
    if isinstance(example_text, str) and example_text:
        shapes.append({"kind": "text", "unit": example_text, "label": "the first example's text repeated"})
    shapes += [{"kind": "text", "unit": "a", "label": "'a' repeated"},
               {"kind": "text", "unit": "1", "label": "digits ('1' repeated)"}]
    for pattern in patterns:
        shapes += pattern_shapes(pattern)
    seen: set[tuple[str, str, str]] = set()
    out = []
    for shape in shapes:
        key = (str(shape.get("prefix", "")), str(shape["unit"]), str(shape.get("tail", "")))
        if key not in seen:
            seen.add(key)
            out.append(shape)
    return out[:MAX_STRING_SHAPES]


def _list_shapes(item: str, shown: list[Any]) -> list[dict[str, Any]]:
    defaults: dict[str, list[Any]] = {"int": [1], "float": [1.5], "bool": [True], "str": ["a"]}
    items: list[Any] = shown or defaults.get(item, [0])
    shapes: list[dict[str, Any]] = [{"kind": "list", "mode": "cycle", "items": items,
                                     "label": "the first example's items in turn"}]
    if item in ("int", "float"):
        shapes += [{"kind": "list", "mode": "ascending", "item": item, "label": "counting up"},
                   {"kind": "list", "mode": "descending", "item": item, "label": "counting down"}]
    elif item == "str":
        shapes.append({"kind": "list", "mode": "distinct", "items": items[:1], "label": "numbered strings"})
    if len(items) > 1:
        shapes.append({"kind": "list", "mode": "cycle", "items": items[:1], "label": "one item repeated"})
    return shapes[:MAX_LIST_SHAPES]


def _item_kind(items: list[Any]) -> str:
    kinds = {type(x).__name__ for x in items}
    return kinds.pop() if len(kinds) == 1 and kinds <= {"int", "float", "str", "bool"} else "json"


def _positional_probes(name: str, ex: Example, patterns: list[str]) -> list[dict[str, Any]]:
    """A `list[json]` field whose example holds strings or lists is a list of positional arguments: each of those
    grows in its place (the arity stays), as a string or a list field would."""
    shown = ex.input.get(name)
    probes: list[dict[str, Any]] = []
    for index, item in enumerate(shown if isinstance(shown, list) else []):
        if len(probes) >= MAX_STRING_SHAPES or index >= MAX_FIELDS:
            break
        if isinstance(item, str):
            shapes, bound, unit = _string_shapes(item, patterns)[:4], STRING_BOUND, "characters"
        elif isinstance(item, list):
            shapes, bound, unit = _list_shapes(_item_kind(item), item)[:3], LIST_BOUND, "items"
        else:
            continue
        probes += [{"field": name, "index": index, "shape": shape, "bound": bound, "unit": unit,
                    "base": dict(ex.input), **_fixtures(ex)} for shape in shapes]
    return probes


def resource_probes(proposal: Proposal, source: str) -> list[dict[str, Any]]:
    """The probes of a build: one per (string or list input field, shape), each with the example input the field
    grows in, that example's fixtures, the shape and the size bound."""
    patterns = regex_literals(source)
    probes: list[dict[str, Any]] = []
    fields = 0
    for spec in proposal.inputs:
        ftype = parse_type(spec.type)
        if fields >= MAX_FIELDS:
            break
        positional = _positional_probes(spec.name, _base(proposal, spec.name, list), patterns) \
            if ftype.base == "list" and ftype.item == "json" else []
        if positional:
            fields += 1
            probes += positional
            continue
        if ftype.base == "str":
            ex = _base(proposal, spec.name, str)
            shapes, bound, unit = _string_shapes(ex.input.get(spec.name), patterns), STRING_BOUND, "characters"
        elif ftype.base == "list" and ftype.item in ("str", "int", "float", "bool", "json"):
            ex = _base(proposal, spec.name, list)
            shown = ex.input.get(spec.name)
            shapes, bound, unit = _list_shapes(ftype.item or "json", shown if isinstance(shown, list) else []), \
                LIST_BOUND, "items"
        else:
            continue
        fields += 1
        # A bound the proposal declares (max_size, which the runtime enforces) is the largest a caller may send.
        declared = spec.max_size is not None and spec.max_size < bound
        for shape in shapes:
            probes.append({"field": spec.name, "shape": shape, "bound": spec.max_size if declared else bound,
                           "unit": unit, "base": dict(ex.input), **_fixtures(ex), **({"declared": True}
                                                                                      if declared else {})})
    return probes


def shape_label(probe: dict[str, Any]) -> str:
    shape = probe.get("shape") or {}
    where = f"{probe.get('field')}[{probe['index']}]" if isinstance(probe.get("index"), int) else probe.get("field")
    return f"{where}: {shape.get('label') or shape.get('unit')}"
