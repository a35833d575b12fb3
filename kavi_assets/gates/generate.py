"""Inputs the proposal never showed: boundary values next to its examples, then Hypothesis draws from its input schema.

The holdouts are few and written by a person; a wrong skill that passes them all still meets inputs nobody wrote
down. This module derives more inputs from what the proposal declares, so the differential gate can run the
candidate (and an independent implementation) on them. Everything here may be shown to the builder — generated
inputs come back to it as counterexamples — so nothing is derived from the holdout examples: boundary values are
built from the shown examples only, and an input equal to any example or holdout input is dropped (it is already
judged by acceptance).

Deterministic for a seed: Hypothesis runs with an explicit seed, no example database and no shrinking, and its
text strategies use an explicit alphabet (the default one would cache Unicode tables in a `.hypothesis`
directory): nothing is written to disk.
"""

import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kavi_assets.proposals.model import Example, FieldSpec, Proposal

GENERATION_TIME_CAP_S = 3.0
# Boundary values take at most this share of max_cases, so the schema's draws always get room.
BOUNDARY_SHARE = 0.5
INT_CAP = 10**9
MAX_STR_DRAW = 120
MAX_LIST_DRAW = 12
# Mostly what text looks like, plus the characters that break naive code: accents (precomposed and combining),
# non-Latin scripts, an emoji, a non-breaking space, tabs and newlines.
ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    " \t\n" + "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" + "éüßñøÅçЖж日本語😀\u0301\u00a0"
)
KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyz_0123456789"
_TYPE = re.compile(r"^(?P<base>str|int|float|bool|json|list|dict)(?:\[(?:str, ?)?(?P<item>str|int|float|bool|json)\])?"
                   r"(?P<opt> \| None)?$")
_lock = threading.Lock()  # Hypothesis keeps per-process state while a test function runs: one generation at a time


@dataclass(frozen=True)
class FieldType:
    """A FieldSpec type, parsed: `base` is str, int, float, bool, json, list or dict; `item` the element type."""

    base: str
    item: str | None
    optional: bool


def parse_type(text: str) -> FieldType:
    hit = _TYPE.fullmatch(text.strip())
    if hit is None:
        raise ValueError(f"unsupported field type {text!r}")
    base = hit.group("base")
    item = hit.group("item")
    if (base in ("list", "dict")) != (item is not None):
        raise ValueError(f"unsupported field type {text!r}")
    return FieldType(base, item, hit.group("opt") is not None)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- boundary values next to the shown examples --------------------------------------------------------------------


def _scalar_variants(kind: str, value: Any) -> list[Any]:
    if kind == "bool":
        return [not value] if isinstance(value, bool) else [True, False]
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return [value + 1, value - 1, 0, -1, 1, -value]
        return [0, 1, -1]
    if kind == "float":
        if isinstance(value, int | float) and not isinstance(value, bool):
            v = float(value)
            return [v + 1.0, v - 1.0, 0.0, -v, v / 2, -1.0]
        return [0.0, 1.0, -1.0]
    if kind == "str":
        if isinstance(value, str):
            return ["", value[:1], value[:-1], value.upper(), value.lower(), value.swapcase(), f"  {value}  ",
                    value.strip(), value + "\n", value.replace(" ", "  "), value + value]
        return ["", "a", " "]
    return _json_variants(value)


def _json_variants(value: Any) -> list[Any]:
    """Variants of an untyped JSON value, chosen by what the value is."""
    if isinstance(value, bool):
        return [not value, None]
    if isinstance(value, int):
        return [*_scalar_variants("int", value), None]
    if isinstance(value, float):
        return [*_scalar_variants("float", value), None]
    if isinstance(value, str):
        return [*_scalar_variants("str", value)[:6], None]
    if isinstance(value, list):
        return [*_list_variants("json", value), None]
    if isinstance(value, dict):
        return [*_dict_variants("json", value), None]
    return [0, "", [], {}]


def _list_variants(item: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        return [[]]
    out: list[Any] = [[]]
    if value:
        out += [value[1:], value[:-1], [value[0], *value], [*value, value[-1]], value[::-1], value[:1]]
        out += [[v, *value[1:]] for v in _scalar_variants(item, value[0])[:3]]
    else:
        out += [[v] for v in _scalar_variants(item, None)[:2]]
    return out


def _dict_variants(item: str, value: Any) -> list[Any]:
    if not isinstance(value, dict):
        return [{}]
    out: list[Any] = [{}]
    keys = list(value)
    if keys:
        first = keys[0]
        out.append({k: v for k, v in value.items() if k != first})
        out.append({**value, f"{first}_extra": value[first]})
        out += [{**value, first: v} for v in _scalar_variants(item, value[first])[:2]]
        out.append({k.upper(): v for k, v in value.items()})
    else:
        out += [{"a": v} for v in _scalar_variants(item, None)[:1]]
    return out


def _field_variants(spec: FieldSpec, ftype: FieldType, present: bool, value: Any) -> list[Any]:
    """Values for one field near the example's; `_OMIT` drops the field."""
    if not present:
        return _values_near_nothing(ftype)
    if ftype.base == "list":
        out = _list_variants(ftype.item or "json", value)
    elif ftype.base == "dict":
        out = _dict_variants(ftype.item or "json", value)
    else:
        out = _scalar_variants(ftype.base, value)
    if ftype.optional and value is not None:
        out.append(None)
    if not spec.required:
        out.append(_OMIT)
    return out


def _values_near_nothing(ftype: FieldType) -> list[Any]:
    """A field the example left out: its simplest values."""
    if ftype.base == "list":
        return _list_variants(ftype.item or "json", [])[:2]
    if ftype.base == "dict":
        return _dict_variants(ftype.item or "json", {})[:2]
    return _scalar_variants(ftype.base, None)[:2]


class _Omit:
    def __repr__(self) -> str:
        return "<omit>"


_OMIT = _Omit()


def _boundary_inputs(proposal: Proposal, types: dict[str, FieldType]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index of the example it came from, input): one field changed at a time, interleaved across the examples
    and fields so that the first few values already touch every field of every example."""
    queues: list[tuple[int, list[dict[str, Any]]]] = []
    for k, ex in enumerate(proposal.examples):
        for spec in proposal.inputs:
            ftype = types[spec.name]
            present = spec.name in ex.input
            variants = []
            for v in _field_variants(spec, ftype, present, ex.input.get(spec.name)):
                changed = {n: x for n, x in ex.input.items() if n != spec.name}
                if v is not _OMIT:
                    changed[spec.name] = v
                variants.append(changed)
            queues.append((k, variants))
    depth = max((len(q) for _k, q in queues), default=0)
    for j in range(depth):
        for k, q in queues:
            if j < len(q):
                yield k, q[j]


# --- Hypothesis draws from the schema --------------------------------------------------------------------------------


def _numbers(proposal: Proposal, name: str) -> list[float]:
    """Every number in the shown examples' values of one field (nested ones too): the scale of the draws."""
    found: list[float] = []

    def walk(v: Any) -> None:
        if isinstance(v, bool):
            return
        if isinstance(v, int | float):
            found.append(float(v))
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    for ex in proposal.examples:
        walk(ex.input.get(name))
    return found


def _longest(proposal: Proposal, name: str, kind: type) -> int:
    sizes = [len(ex.input[name]) for ex in proposal.examples if isinstance(ex.input.get(name), kind)]
    return max(sizes, default=0)


def _text(alphabet: str, min_size: int, max_size: int) -> Any:
    """Strings over an explicit alphabet, drawn character by character: `st.text` would load (and cache on disk)
    Hypothesis's Unicode tables even for an explicit alphabet."""
    from hypothesis import strategies as st

    return st.lists(st.sampled_from(tuple(alphabet)), min_size=min_size, max_size=max_size).map("".join)


def _strategy(proposal: Proposal, spec: FieldSpec, ftype: FieldType) -> Any:
    """A Hypothesis strategy for one field, scaled to the shown examples: numbers within a few times the largest
    shown (non-negative when every shown one is), strings and lists a little longer than the longest shown."""
    from hypothesis import strategies as st

    numbers = _numbers(proposal, spec.name)
    bound = int(min(INT_CAP, max(10.0, 2 * max((abs(n) for n in numbers), default=0.0))))
    # Negative numbers only where the examples show one: a field shown (or never shown) non-negative is most
    # likely a count or a limit, and the boundary values already try -1 next to a shown number.
    low = -bound if numbers and min(numbers) < 0 else 0
    text_len = min(MAX_STR_DRAW, max(12, 2 * _longest(proposal, spec.name, str)))
    list_len = min(MAX_LIST_DRAW, max(4, _longest(proposal, spec.name, list) + 2))

    def scalar(kind: str) -> Any:
        if kind == "str":
            return _text(ALPHABET, 0, text_len)
        if kind == "int":
            return st.integers(min_value=low, max_value=bound)
        if kind == "float":
            return st.floats(min_value=float(low), max_value=float(bound), allow_nan=False, allow_infinity=False)
        if kind == "bool":
            return st.booleans()
        leaves = (st.none() | st.booleans() | st.integers(min_value=-bound, max_value=bound)
                  | st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
                  | _text(ALPHABET, 0, 16))
        return st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                            | st.dictionaries(_text(KEY_ALPHABET, 1, 8), inner,
                                              max_size=4), max_leaves=8)

    strat: Any
    if ftype.base == "list":
        strat = st.lists(scalar(ftype.item or "json"), max_size=list_len)
    elif ftype.base == "dict":
        strat = st.dictionaries(_text(KEY_ALPHABET, 1, 10), scalar(ftype.item or "json"),
                                max_size=min(MAX_LIST_DRAW, list_len))
    else:
        strat = scalar(ftype.base)
    return st.none() | strat if ftype.optional else strat


def _provider() -> Any:
    """Hypothesis's own provider, minus its habit of mixing in constants from the source of whatever "local"
    modules this process has imported (which differ between processes, and are cached in a `.hypothesis`
    directory): the same seed draws the same values anywhere, and nothing is written."""
    from functools import cached_property

    from hypothesis.internal.conjecture.providers import HypothesisProvider
    from hypothesis.internal.constants_ast import Constants

    class SeededProvider(HypothesisProvider):
        @cached_property
        def _local_constants(self) -> Constants:
            return Constants()

    return SeededProvider


def _draws(proposal: Proposal, types: dict[str, FieldType], count: int, seed: int, deadline: float,
           accept: Callable[[dict[str, Any]], bool]) -> None:
    """Feed draws to `accept` (which says whether it kept one) until `count` were kept, a bounded number of tries
    was spent or `deadline` passed. The draws come straight from a seeded ConjectureData: no test engine, no
    example database, no shrinking."""
    from random import Random

    from hypothesis import strategies as st
    from hypothesis.control import BuildContext
    from hypothesis.errors import HypothesisException, StopTest
    from hypothesis.internal.conjecture.data import ConjectureData

    required = {s.name: _strategy(proposal, s, types[s.name]) for s in proposal.inputs if s.required}
    optional = {s.name: _strategy(proposal, s, types[s.name]) for s in proposal.inputs if not s.required}
    inputs = st.fixed_dictionaries(required, optional=optional)
    provider = _provider()
    rnd = Random(seed)
    kept = 0
    with _lock:
        for _ in range(count * 4):
            if kept >= count or time.monotonic() > deadline:
                return
            data = ConjectureData(random=rnd, provider=provider)
            try:
                with BuildContext(data, is_final=False, wrapped_test=_draws):
                    value = data.draw(inputs)
            except (StopTest, HypothesisException):
                continue  # this draw ran over Hypothesis's own size limit: the next one starts afresh
            if accept(value):
                kept += 1


# --- the cases ----------------------------------------------------------------------------------------------------


def _fixtures(ex: Example) -> dict[str, Any]:
    dumped = ex.model_dump(mode="json")
    return {"vault_files": dumped.get("vault_files") or {}, "http_responses": dumped.get("http_responses") or {},
            "secrets": dumped.get("secrets") or {}}


def _json_safe(value: Any) -> bool:
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return bool(text)


def generated_cases(proposal: Proposal, *, max_cases: int, seed: int,
                    time_cap_s: float = GENERATION_TIME_CAP_S) -> list[dict[str, Any]]:
    """Up to `max_cases` inputs no example or holdout holds, each a case {"input", "vault_files", "http_responses",
    "secrets"}: boundary values next to the shown examples first (at most half of them), then draws from the
    input schema. The fixtures come from the example a boundary value was derived from, and round-robin from the
    shown examples for the draws, so skills that use handles can run. Same proposal and seed, same list."""
    if max_cases <= 0:
        return []
    deadline = time.monotonic() + max(0.0, time_cap_s)
    types = {s.name: parse_type(s.type) for s in proposal.inputs}
    seen = {canonical(ex.input) for ex in (*proposal.examples, *proposal.holdout_examples)}
    cases: list[dict[str, Any]] = []
    fixtures = [_fixtures(ex) for ex in proposal.examples]

    def add(value: dict[str, Any], source: int) -> bool:
        if not _json_safe(value):
            return False
        key = canonical(value)
        if key in seen:
            return False
        seen.add(key)
        cases.append({"input": value, **fixtures[source % len(fixtures)]})
        return True

    boundary_cap = max(1, math.ceil(max_cases * BOUNDARY_SHARE))
    for source, value in _boundary_inputs(proposal, types):
        if len(cases) >= boundary_cap or time.monotonic() > deadline:
            break
        add(value, source)
    draws = [0]

    def accept(value: dict[str, Any]) -> bool:
        if add(value, draws[0]):
            draws[0] += 1
            return True
        return False

    if len(cases) < max_cases and time.monotonic() <= deadline:
        _draws(proposal, types, max_cases - len(cases), seed, deadline, accept)
    return cases[:max_cases]
