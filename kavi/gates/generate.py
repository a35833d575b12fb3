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
import threading
import time
from collections.abc import Callable
from typing import Any

from kavi.gates.boundary import (
    FALLBACK_ALPHABET,
    MAX_DEPTH,
    MAX_POSITIONS,
    Pools,
    boundary_inputs,
    canonical,
    fits,
    scalar_leaves,
    shown_pools,
    simplest_values,
)
from kavi.gates.values import FIXTURE_FIELDS
from kavi.proposals.model import Example, FieldSpec, Proposal
from kavi.proposals.values import FieldType, parse_type

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
_lock = threading.Lock()  # Hypothesis keeps per-process state while a test function runs: one generation at a time
MAX_SHAPED_KEYS = 16  # keys of one object drawn afresh; the rest keep their shown values
SHAPE_SHARE = 2 / 3  # of the Hypothesis draws, the share shaped like a shown example (the rest: the schema's)


# --- Hypothesis draws: shaped like a shown example, and from the schema ----------------------------------------------


def _scale(pools: Pools, name: str) -> tuple[int, int]:
    """Numbers within a few times the largest shown in a field, non-negative when every shown one is: a field shown
    (or never shown) non-negative is most likely a count or a limit, and the boundary values try -1 anyway."""
    numbers = pools.numbers.get(name, [])
    bound = int(min(INT_CAP, max(10.0, 2 * max((abs(n) for n in numbers), default=0.0))))
    return (-bound if numbers and min(numbers) < 0 else 0), bound


def _text(alphabet: str, min_size: int, max_size: int) -> Any:
    """Strings over an explicit alphabet, drawn character by character: `st.text` would load (and cache on disk)
    Hypothesis's Unicode tables even for an explicit alphabet."""
    from hypothesis import strategies as st

    return st.lists(st.sampled_from(tuple(alphabet)), min_size=min_size, max_size=max_size).map("".join)


def _strategy(proposal: Proposal, spec: FieldSpec, ftype: FieldType, pools: Pools) -> Any:
    """A Hypothesis strategy for one field from its declared type alone, scaled to the shown examples: numbers
    within a few times the largest shown, strings and lists a little longer than the longest shown."""
    from hypothesis import strategies as st

    low, bound = _scale(pools, spec.name)
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


def _longest(proposal: Proposal, name: str, kind: type) -> int:
    sizes = [len(ex.input[name]) for ex in proposal.examples if isinstance(ex.input.get(name), kind)]
    return max(sizes, default=0)


class _Shaper:
    """Strategies shaped like one field's shown value: numbers near the field's scale, strings over the field's
    alphabet (or its words and the words the description quotes, joined as its strings join them), lists of their
    elements' shapes with lengths 0..len+2 (and at their shown length, position by position: positional arguments
    keep their arity), objects with the same keys."""

    def __init__(self, pools: Pools, name: str, siblings: list[Any]) -> None:
        from hypothesis import strategies as st

        self.st = st
        self.pools = pools
        self.low, self.bound = _scale(pools, name)
        alphabet = pools.alphabets.get(name) or FALLBACK_ALPHABET
        longest = min(MAX_STR_DRAW, max(4, pools.longest_str.get(name, 0) + 2))
        branches = [_text(alphabet, 0, longest)]
        if pools.words:
            # Twice the weight of the others: recombined words reach the tokens a spec accepts (and the words the
            # description quotes), which characters drawn one by one almost never spell.
            most = max(3, pools.most_words.get(name, 0) + 1)
            words = st.lists(st.sampled_from(pools.words), min_size=1, max_size=most).map(
                pools.separators.get(name, " ").join)
            branches += [words, words]
        if pools.strings:
            branches.append(st.sampled_from(pools.strings))
        self.string = st.one_of(branches)
        self.siblings = siblings

    def of(self, value: Any, kind: str, item: str | None = None, depth: int = 0) -> Any:
        st = self.st
        if kind == "json":
            kind = _kind_of(value)
            item = "json"
        if kind == "bool":
            return st.booleans()
        if kind == "int":
            return st.integers(min_value=self.low, max_value=self.bound)
        if kind == "float":
            return st.floats(min_value=float(self.low), max_value=float(self.bound), allow_nan=False,
                             allow_infinity=False)
        if kind == "str":
            return self.string
        if kind == "null":
            return st.none()
        if depth >= MAX_DEPTH:
            return st.just(value)
        if kind == "list":
            return self._list(value if isinstance(value, list) else [], item or "json", depth)
        return self._dict(value if isinstance(value, dict) else {}, item or "json", depth)

    def _list(self, value: list[Any], item: str, depth: int) -> Any:
        st = self.st
        if value:
            shapes: dict[str, Any] = {}
            for x in value[:MAX_POSITIONS]:
                shapes.setdefault(_signature(x, item), self.of(x, item, None, depth + 1))
            element = st.one_of(list(shapes.values()))
        else:
            fitting = [x for x in self.siblings if x is not None and fits(item, x)][:MAX_POSITIONS]
            shapes = {}
            for x in fitting:
                shapes.setdefault(_signature(x, item), self.of(x, item, None, depth + 1))
            if not shapes:  # nothing next to it either: the simplest values of its kind
                for x in simplest_values(item, self.pools):
                    shapes.setdefault(_signature(x, item), self.of(x, item, None, depth + 1))
            element = st.one_of(list(shapes.values()))
        # Lengths 0..len+2; a shown empty list tells nothing of its length: up to 4 then.
        varied = st.lists(element, max_size=min(MAX_LIST_DRAW, max(len(value) + 2, 4 if not value else 0)))
        if not value:
            return varied
        fixed = st.tuples(*(self.of(x, item, None, depth + 1) for x in value[:MAX_POSITIONS]))
        rest = value[MAX_POSITIONS:]
        return st.one_of(fixed.map(lambda t: [*t, *rest]), varied)

    def _dict(self, value: dict[str, Any], item: str, depth: int) -> Any:
        st = self.st
        if not value:
            return st.dictionaries(_text(KEY_ALPHABET, 1, 8), self.of(simplest_values(item, self.pools)[0], item),
                                   max_size=3)
        keys = list(value)
        drawn = {k: self.of(value[k], item, None, depth + 1) for k in keys[:MAX_SHAPED_KEYS]}
        kept = {k: st.just(value[k]) for k in keys[MAX_SHAPED_KEYS:]}
        return st.fixed_dictionaries({**drawn, **kept})


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    return "list" if isinstance(value, list) else "dict"


def _signature(value: Any, kind: str) -> str:
    """The shape of a value, to draw one strategy per distinct element shape of a list."""
    if kind != "json":
        return kind
    if isinstance(value, list):
        return "[" + ",".join(sorted({_signature(x, "json") for x in value[:MAX_POSITIONS]})) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_signature(v, 'json')}" for k, v in list(value.items())[:MAX_SHAPED_KEYS]) + "}"
    return _kind_of(value)


def _shaped_inputs(proposal: Proposal, types: dict[str, FieldType], pools: Pools, ex: Example) -> Any:
    """Whole inputs shaped like one shown example: each field it holds drawn from that value's shape (a field it
    leaves null from the schema), the fields it leaves out left out."""
    from hypothesis import strategies as st

    siblings = list(scalar_leaves(ex.input))
    fields: dict[str, Any] = {}
    for spec in proposal.inputs:
        if spec.name not in ex.input:
            continue
        ftype = types[spec.name]
        value = ex.input[spec.name]
        if value is None and ftype.base != "json":
            fields[spec.name] = _strategy(proposal, spec, ftype, pools)
        else:
            fields[spec.name] = _Shaper(pools, spec.name, siblings).of(value, ftype.base, ftype.item)
    return st.fixed_dictionaries(fields)


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


def _draws(proposal: Proposal, types: dict[str, FieldType], pools: Pools, count: int, seed: int, deadline: float,
           accept: Callable[[dict[str, Any], int], bool]) -> None:
    """Feed draws to `accept` (with the index of the example whose fixtures go with it; it says whether it kept the
    draw) until `count` were kept, a bounded number of tries was spent or `deadline` passed. Of every three draws,
    two are shaped like a shown example (round-robin) and one comes from the schema alone. The draws come straight
    from a seeded ConjectureData: no test engine, no example database, no shrinking."""
    from random import Random

    from hypothesis import strategies as st
    from hypothesis.control import BuildContext
    from hypothesis.errors import HypothesisException, StopTest
    from hypothesis.internal.conjecture.data import ConjectureData

    required = {s.name: _strategy(proposal, s, types[s.name], pools) for s in proposal.inputs if s.required}
    optional = {s.name: _strategy(proposal, s, types[s.name], pools) for s in proposal.inputs if not s.required}
    schema = st.fixed_dictionaries(required, optional=optional)
    shaped = [_shaped_inputs(proposal, types, pools, ex) for ex in proposal.examples]
    provider = _provider()
    rnd = Random(seed)
    kept = 0
    schema_draws = 0
    with _lock:
        for n in range(count * 4):
            if kept >= count or time.monotonic() > deadline:
                return
            use_schema = not shaped or (n + 1) * (1 - SHAPE_SHARE) >= schema_draws + 1
            source = schema_draws if use_schema else n - schema_draws
            strategy = schema if use_schema else shaped[source % len(shaped)]
            schema_draws += use_schema
            data = ConjectureData(random=rnd, provider=provider)
            try:
                with BuildContext(data, is_final=False, wrapped_test=_draws):
                    value = data.draw(strategy)
            except (StopTest, HypothesisException):
                continue  # this draw ran over Hypothesis's own size limit: the next one starts afresh
            if accept(value, source):
                kept += 1


# --- the cases ----------------------------------------------------------------------------------------------------


def example_fixtures(ex: Example) -> dict[str, Any]:
    """An example's handle fixtures (vault files, HTTP responses, secrets), as a case carries them."""
    dumped = ex.model_dump(mode="json")
    return {key: dumped.get(key) or {} for key in FIXTURE_FIELDS}


def _json_safe(value: Any) -> bool:
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return bool(text)


def generated_cases(proposal: Proposal, *, max_cases: int, seed: int,
                    time_cap_s: float = GENERATION_TIME_CAP_S) -> list[dict[str, Any]]:
    """Up to `max_cases` inputs no example or holdout holds, each a case {"input", "vault_files", "http_responses",
    "secrets"}: boundary values next to the shown examples first (at most half of them), then Hypothesis draws,
    most shaped like a shown example, the rest from the input schema alone. The fixtures come from the example a
    value was derived from (round-robin from the shown examples for the schema's draws), so skills that use handles
    can run. Same proposal and seed, same list."""
    if max_cases <= 0:
        return []
    deadline = time.monotonic() + max(0.0, time_cap_s)
    types = {s.name: parse_type(s.type) for s in proposal.inputs}
    seen = {canonical(ex.input) for ex in (*proposal.examples, *proposal.holdout_examples)}
    seen |= {canonical(i) for i in proposal.outside_domain}  # a person said these are not the skill's to answer
    cases: list[dict[str, Any]] = []
    fixtures = [example_fixtures(ex) for ex in proposal.examples]

    def add(value: dict[str, Any], source: int) -> bool:
        if not _json_safe(value):
            return False
        key = canonical(value)
        if key in seen:
            return False
        seen.add(key)
        cases.append({"input": value, **fixtures[source % len(fixtures)]})
        return True

    pools = shown_pools(proposal)
    boundary_cap = max(1, math.ceil(max_cases * BOUNDARY_SHARE))
    for source, value in boundary_inputs(proposal, types, pools):
        if len(cases) >= boundary_cap or time.monotonic() > deadline:
            break
        add(value, source)
    if len(cases) < max_cases and time.monotonic() <= deadline:
        _draws(proposal, types, pools, max_cases - len(cases), seed, deadline, add)
    return cases[:max_cases]
