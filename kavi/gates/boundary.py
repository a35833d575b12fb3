"""Values next to the shown examples: the material the builder is shown, gathered once, and boundary values built
from it, every leaf and level of an example changed one at a time (never derived from a holdout)."""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kavi.proposals.model import FieldSpec, Proposal
from kavi.proposals.values import FieldType


def canonical(value: Any) -> str:
    """One text per JSON value (keys sorted): how inputs are told apart."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- what the builder is shown, gathered once ------------------------------------------------------------------------

MAX_POSITIONS = 8  # elements of one list (keys of one object) whose values are varied one at a time
MAX_DEPTH = 6  # nesting levels the boundary values and the shaped draws reach
MAX_NEAR = 120  # boundary values kept for one value (the first ranks win)
MAX_VOCABULARY = 48
FALLBACK_ALPHABET = "abcAB "
# A word the description quotes ('one', "GET", `utf-8`): specs often list the valid tokens that way.
_QUOTED = re.compile(r"'([^'\s]{1,40})'|\"([^\"\s]{1,40})\"|`([^`\s]{1,40})`")
_SPACE = re.compile(r"(\s+)")


@dataclass(frozen=True)
class Pools:
    """Material for values the examples do not hold, taken only from what the builder is shown (the examples, the
    description and the field descriptions; never a holdout): the strings the examples hold, the words in them and
    the words the description quotes, and per field the characters of its strings and its numbers."""

    strings: tuple[str, ...]
    words: tuple[str, ...]
    alphabets: dict[str, str]
    numbers: dict[str, list[float]]
    longest_str: dict[str, int]
    most_words: dict[str, int]
    separators: dict[str, str]


def scalar_leaves(value: Any, depth: int = 0) -> Iterator[Any]:
    """The scalars in a JSON value (object keys excluded), outer ones first, bounded in depth."""
    if isinstance(value, list):
        if depth < MAX_DEPTH:
            for v in value:
                yield from scalar_leaves(v, depth + 1)
    elif isinstance(value, dict):
        if depth < MAX_DEPTH:
            for v in value.values():
                yield from scalar_leaves(v, depth + 1)
    else:
        yield value


def _unique(items: Iterator[Any] | list[Any], limit: int) -> list[Any]:
    out: list[Any] = []
    seen: set[str] = set()
    for x in items:
        key = canonical(x)
        if key not in seen:
            seen.add(key)
            out.append(x)
            if len(out) >= limit:
                break
    return out


def shown_pools(proposal: Proposal) -> Pools:
    strings: list[str] = []
    by_field: dict[str, list[str]] = {s.name: [] for s in proposal.inputs}
    numbers: dict[str, list[float]] = {s.name: [] for s in proposal.inputs}
    for ex in proposal.examples:
        for name, value in ex.input.items():
            for leaf in scalar_leaves(value):
                if isinstance(leaf, str):
                    strings.append(leaf)
                    by_field.setdefault(name, []).append(leaf)
                elif isinstance(leaf, int | float) and not isinstance(leaf, bool):
                    numbers.setdefault(name, []).append(float(leaf))
    texts = [proposal.description, *(s.description for s in proposal.inputs)]
    quoted = [next(g for g in hit.groups() if g) for t in texts for hit in _QUOTED.finditer(t)]
    words = _unique(iter([*(w for s in strings for w in s.split()), *quoted]), MAX_VOCABULARY)
    every = "".join(dict.fromkeys("".join(strings)))
    alphabets, longest, most, seps = {}, {}, {}, {}
    for name, found in by_field.items():
        alphabets[name] = "".join(dict.fromkeys("".join(found))) or every or FALLBACK_ALPHABET
        longest[name] = max((len(x) for x in found), default=0)
        most[name] = max((len(x.split()) for x in found), default=0)
        gaps = [c for x in found for c in x if not c.isalnum()]
        seps[name] = max(dict.fromkeys(gaps), key=gaps.count) if gaps else " "
    return Pools(tuple(_unique(iter(s for s in strings if s), 64)), tuple(words), alphabets, numbers, longest, most,
                  seps)


# --- boundary values: every leaf and every level of a shown example's value ----------------------------------------
# Each value comes with a rank: the most telling change of every position first (zero in a number, the empty
# string, the empty or one-element list), then the next... so that the first few boundary values already touch
# every leaf of every example, however deep it sits.

Ranked = list[tuple[int, Any]]


def _ranked(values: list[Any]) -> Ranked:
    return list(enumerate(values))


def _int_near(value: Any) -> list[Any]:
    if isinstance(value, int) and not isinstance(value, bool):
        return [0, value + 1, value - 1, -value, 1, -1]
    return [0, 1, -1]


def _float_near(value: Any) -> list[Any]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        v = float(value)
        return [0.0, v + 1.0, v - 1.0, -v, v / 2, -1.0]
    return [0.0, 1.0, -1.0]


def _str_near(value: Any, pools: Pools, siblings: list[Any]) -> list[Any]:
    if not isinstance(value, str) or not value:
        # Nothing to vary: what else the example and the other examples hold, then short plain text.
        near = [x for x in siblings if isinstance(x, str) and x][:2] + list(pools.strings[:2])
        return [*near, "a", "ab", " ", "aB c"]
    s = value
    out = ["", s.upper() if s.upper() != s else s.lower(), s[:1], s[:-1], s[1:], f"  {s}  ", s + s, s[::-1]]
    parts = _SPACE.split(s)  # words and the whitespace between them
    if len(parts) >= 3:
        first, gap, second, tail = parts[0], parts[1], parts[2], "".join(parts[3:])
        out += [first + second + tail,  # two words joined
                second + gap + first + tail,  # two words swapped
                "".join(parts[2:]),  # the first word dropped
                first + gap + s]  # the first word repeated
    out += [s.upper(), s.lower(), s.swapcase(), s.strip(), s + "\n", s.replace(" ", "  ")]
    return out


def _fill(kind: str, siblings: list[Any], pools: Pools) -> list[Any]:
    """Elements for an empty list: what its siblings hold first (a list next to a string is likely a list of
    strings), then the simplest values of its declared kind."""
    fitting = [x for x in siblings if x is not None and fits(kind, x)]
    return _unique(iter([*fitting[:3], *simplest_values(kind, pools)]), 5)


def fits(kind: str, value: Any) -> bool:
    if kind == "json":
        return True
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    return {"str": isinstance(value, str), "int": isinstance(value, int),
            "float": isinstance(value, int | float)}.get(kind, False)


def simplest_values(kind: str, pools: Pools) -> list[Any]:
    simplest: dict[str, list[Any]] = {"str": ["", "a"], "int": [0, 1], "float": [0.0, 1.0], "bool": [True, False]}
    return simplest.get(kind, [0, "a"])  # json: a number and a (non-empty) string


def _near(value: Any, kind: str, item: str | None, pools: Pools, siblings: list[Any], depth: int = 0) -> Ranked:
    """Ranked values next to `value` of a declared kind (`list`/`dict` with an `item` kind, a primitive, or `json`,
    whose values are varied by what they are), varying every position at every level, bounded."""
    if kind == "json":
        if isinstance(value, list):
            kind, item = "list", "json"
        elif isinstance(value, dict):
            kind, item = "dict", "json"
        elif isinstance(value, bool):
            kind = "bool"
        elif isinstance(value, int):
            kind = "int"
        elif isinstance(value, float):
            kind = "float"
        elif isinstance(value, str):
            kind = "str"
        else:
            return _ranked([0, "", [], {}])
    if kind == "bool":
        return _ranked([not value] if isinstance(value, bool) else [True, False])
    if kind == "int":
        return _ranked(_int_near(value))
    if kind == "float":
        return _ranked(_float_near(value))
    if kind == "str":
        return _ranked(_str_near(value, pools, siblings))
    if kind == "list":
        return _list_near(value, item or "json", pools, siblings, depth)
    return _dict_near(value, item or "json", pools, siblings, depth)


def _list_near(value: Any, item: str, pools: Pools, siblings: list[Any], depth: int) -> Ranked:
    if not isinstance(value, list):
        return [(0, [])]
    if not value:
        fills = _fill(item, siblings, pools)
        return [*((0, [x]) for x in fills), *((1, [x, x]) for x in fills[:2])]  # one element, then a repeated one
    n = len(value)
    out: Ranked = [(0, [])]
    if n > 1:
        out += [(0, value[:1]), (1, value[1:]), (1, value[::-1]), (2, value[:-1]),
                (2, [value[1], value[0], *value[2:]])]
    out += [(2, [value[0], *value]), (3, [*value, value[-1]])]
    if depth < MAX_DEPTH:
        for i, x in enumerate(value[:MAX_POSITIONS]):
            for rank, v in _near(x, item, None, pools, siblings, depth + 1):
                out.append((rank, [*value[:i], v, *value[i + 1:]]))
    return _best(out)


def _dict_near(value: Any, item: str, pools: Pools, siblings: list[Any], depth: int) -> Ranked:
    if not isinstance(value, dict):
        return [(0, {})]
    if not value:
        return [(0, {"a": x}) for x in _fill(item, siblings, pools)[:2]]
    keys = list(value)
    first = keys[0]
    out: Ranked = [(0, {})]
    out += [(1, {k: v for k, v in value.items() if k != key}) for key in keys[:MAX_POSITIONS]]
    out += [(2, {**value, f"{first}_extra": value[first]}), (3, {k.upper(): v for k, v in value.items()})]
    if depth < MAX_DEPTH:
        for key in keys[:MAX_POSITIONS]:
            for rank, v in _near(value[key], item, None, pools, siblings, depth + 1):
                out.append((rank, {**value, key: v}))
    return _best(out)


def _best(ranked: Ranked) -> Ranked:
    """The first MAX_NEAR by rank, in their order within a rank (outer changes before inner ones)."""
    return sorted(ranked, key=lambda rv: rv[0])[:MAX_NEAR]


def _field_variants(spec: FieldSpec, ftype: FieldType, present: bool, value: Any, pools: Pools,
                    siblings: list[Any]) -> Ranked:
    """Ranked values for one field near the example's; `_OMIT` drops the field."""
    if not present:
        return _ranked(_values_near_nothing(ftype, pools))
    if value is None and ftype.base != "json":
        out = _ranked(_values_near_nothing(ftype, pools))
    else:
        out = _near(value, ftype.base, ftype.item, pools, siblings)
    if ftype.optional and value is not None:
        out.append((1, None))
    if not spec.required:
        out.append((2, _OMIT))
    return out


def _values_near_nothing(ftype: FieldType, pools: Pools) -> list[Any]:
    """A field the example left out (or left null): its simplest values."""
    if ftype.base == "list":
        return [[], *([x] for x in simplest_values(ftype.item or "json", pools)[:1])]
    if ftype.base == "dict":
        return [{}, *({"a": x} for x in simplest_values(ftype.item or "json", pools)[:1])]
    return simplest_values(ftype.base, pools)


class _Omit:
    def __repr__(self) -> str:
        return "<omit>"


_OMIT = _Omit()


def boundary_inputs(proposal: Proposal, types: dict[str, FieldType],
                     pools: Pools) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index of the example it came from, input): one field changed at a time, ordered by rank and interleaved
    across the examples and fields, so that the first few values already touch every field of every example."""
    order: list[tuple[int, int, int, int, dict[str, Any]]] = []
    for k, ex in enumerate(proposal.examples):
        siblings = list(scalar_leaves(ex.input))
        for f, spec in enumerate(proposal.inputs):
            present = spec.name in ex.input
            seen_rank: dict[int, int] = {}
            for rank, v in _field_variants(spec, types[spec.name], present, ex.input.get(spec.name), pools,
                                           siblings):
                changed = {n: x for n, x in ex.input.items() if n != spec.name}
                if v is not _OMIT:
                    changed[spec.name] = v
                nth = seen_rank.get(rank, 0)
                seen_rank[rank] = nth + 1
                order.append((rank, nth, k, f, changed))
    order.sort(key=lambda o: o[:4])
    for _rank, _nth, k, _f, changed in order:
        yield k, changed
