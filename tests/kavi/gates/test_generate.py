"""Generated inputs: every field type, deterministic for a seed, bounded, boundary values next to the shown
examples (never next to a holdout), fixtures borrowed from the examples, nothing written to disk."""

import json
import time
from pathlib import Path
from typing import Any

import pytest

from kavi.gates.boundary import canonical
from kavi.gates.generate import generated_cases
from kavi.proposals.model import Proposal, parse_proposal
from kavi.proposals.values import parse_type

ALL_TYPES: dict[str, Any] = {
    "name": "mixed_fields",
    "description": "A skill whose inputs use every field type the contract has.",
    "side_effect_class": "READ_ONLY",
    "inputs": [
        {"name": "text", "type": "str"},
        {"name": "count", "type": "int"},
        {"name": "ratio", "type": "float"},
        {"name": "flag", "type": "bool"},
        {"name": "blob", "type": "json"},
        {"name": "numbers", "type": "list[int]"},
        {"name": "labels", "type": "dict[str, str]"},
        {"name": "note", "type": "str | None"},
        {"name": "limit", "type": "int", "required": False},
    ],
    "outputs": [{"name": "ok", "type": "bool"}],
    "examples": [
        {"input": {"text": "Hello World", "count": 7, "ratio": 2.5, "flag": True, "blob": {"a": [1, 2]},
                   "numbers": [3, 5, 8], "labels": {"k": "v"}, "note": "memo"},
         "expected": {"ok": True}, "vault_files": {"notes/a.md": "# A\n"}},
    ],
    "holdout_examples": [
        {"input": {"text": "zebraholdout", "count": 4242, "ratio": 2.5, "flag": False, "blob": None,
                   "numbers": [977], "labels": {}, "note": None, "limit": 31337},
         "expected": {"ok": False}},
    ],
}


@pytest.fixture()
def mixed() -> Proposal:
    return parse_proposal(ALL_TYPES)


def _valid(ftype_text: str, value: Any) -> bool:
    ftype = parse_type(ftype_text)
    if value is None:
        return ftype.optional or ftype.base == "json"  # null is a JSON value

    def one(kind: str, v: Any) -> bool:
        return {"str": isinstance(v, str), "int": isinstance(v, int) and not isinstance(v, bool),
                "float": isinstance(v, int | float) and not isinstance(v, bool), "bool": isinstance(v, bool),
                "json": True}[kind]

    if ftype.base == "list":
        return isinstance(value, list) and all(one(ftype.item or "json", v) for v in value)
    if ftype.base == "dict":
        return isinstance(value, dict) and all(isinstance(k, str) and one(ftype.item or "json", v)
                                               for k, v in value.items())
    return one(ftype.base, value)


def test_every_field_type_is_generated_and_valid(mixed: Proposal) -> None:
    cases = generated_cases(mixed, max_cases=60, seed=7)
    assert len(cases) == 60
    specs = {s.name: s for s in mixed.inputs}
    for case in cases:
        inp = case["input"]
        assert set(inp) <= set(specs)
        assert {n for n, s in specs.items() if s.required} <= set(inp), inp
        for name, value in inp.items():
            assert _valid(specs[name].type, value), (name, value)
        json.dumps(inp, allow_nan=False)  # JSON as the runner receives it: no NaN, no infinity
    assert any(c["input"]["note"] is None for c in cases)
    assert any("limit" not in c["input"] for c in cases) and any("limit" in c["input"] for c in cases)
    for name in ("text", "count", "ratio", "flag", "numbers", "labels", "blob"):
        assert len({canonical(c["input"][name]) for c in cases}) >= 2, name


def test_deterministic_for_a_seed_and_different_for_another(mixed: Proposal) -> None:
    first = generated_cases(mixed, max_cases=40, seed=11)
    assert generated_cases(mixed, max_cases=40, seed=11) == first
    assert generated_cases(mixed, max_cases=40, seed=12) != first


def test_bounded_by_count_and_time(mixed: Proposal) -> None:
    assert len(generated_cases(mixed, max_cases=5, seed=1)) == 5
    assert generated_cases(mixed, max_cases=0, seed=1) == []
    t0 = time.monotonic()
    cases = generated_cases(mixed, max_cases=10_000, seed=1, time_cap_s=0.2)
    assert time.monotonic() - t0 < 2.0
    assert len(cases) < 10_000


def test_boundary_values_next_to_the_shown_examples_come_first(mixed: Proposal) -> None:
    cases = generated_cases(mixed, max_cases=200, seed=3)
    boundary = cases[:100]
    example = mixed.examples[0].input

    def values(name: str) -> list[Any]:
        return [c["input"].get(name) for c in boundary]

    assert {8, 6, 0, -1} <= set(values("count"))
    assert {"", "H", "HELLO WORLD", "hello world", "  Hello World  "} <= set(values("text"))
    assert {3.5, 1.5, 0.0} <= set(values("ratio"))
    assert False in values("flag")
    numbers = [canonical(v) for v in values("numbers")]
    assert {canonical([]), canonical([5, 8]), canonical([3, 5]), canonical([3, 3, 5, 8]),
            canonical([3, 5, 8, 8])} <= set(numbers)
    assert canonical({}) in {canonical(v) for v in values("labels")}
    assert None in values("note")
    # One field changed at a time: every other field keeps the example's value.
    for c in boundary[:10]:
        changed = [n for n in example if c["input"].get(n, object()) != example[n]]
        assert len(changed) <= 1 or "limit" in c["input"], c["input"]


def test_never_an_example_or_holdout_input_and_nothing_near_a_holdout(mixed: Proposal) -> None:
    cases = generated_cases(mixed, max_cases=200, seed=5)
    known = {canonical(ex.input) for ex in (*mixed.examples, *mixed.holdout_examples)}
    assert not known & {canonical(c["input"]) for c in cases}
    text = json.dumps([c["input"] for c in cases]).lower()
    assert "zebraholdou" not in text
    numbers: set[float] = set()

    def walk(v: Any) -> None:
        if isinstance(v, int | float) and not isinstance(v, bool):
            numbers.add(v)
        elif isinstance(v, list | tuple):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk([c["input"] for c in cases])
    assert not numbers & {4241, 4243, 31336, 31338, 976, 978}


def test_fixtures_are_borrowed_from_the_shown_examples(mixed: Proposal) -> None:
    for case in generated_cases(mixed, max_cases=20, seed=2):
        assert case["vault_files"] == {"notes/a.md": "# A\n"}
        assert case["http_responses"] == {} and case["secrets"] == {}


def test_nothing_is_written_to_disk(mixed: Proposal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    generated_cases(mixed, max_cases=60, seed=9)
    assert list(tmp_path.iterdir()) == []


# --- shape-aware: every leaf and every level of a shown value, and draws shaped like it ------------------------------


def _positional(examples: list[list[Any]], description: str = "Positional arguments in, one JSON result out.",
                holdouts: list[list[Any]] | None = None) -> Proposal:
    """A proposal of the datasets' form (one `args: list[json]` input), but nothing here depends on that form."""
    return parse_proposal({
        "name": "positional", "description": description, "side_effect_class": "READ_ONLY",
        "inputs": [{"name": "args", "type": "list[json]"}], "outputs": [{"name": "result", "type": "json"}],
        "examples": [{"input": {"args": a}, "expected": {"result": None}} for a in examples],
        "holdout_examples": [{"input": {"args": a}, "expected": {"result": None}} for a in holdouts or []]})


def _args(cases: list[dict[str, Any]]) -> list[Any]:
    return [c["input"]["args"] for c in cases]


def test_boundary_values_reach_every_leaf_and_every_level() -> None:
    shown = [[1, 3, 5, 0], "ab cd"]
    cases = generated_cases(_positional([shown]), max_cases=400, seed=1)
    got = {canonical(a) for a in _args(cases)}

    def at(i: int, v: Any) -> str:
        inner = list(shown[0])  # type: ignore[call-overload]
        inner[i] = v
        return canonical([inner, shown[1]])

    for i, leaf in enumerate(shown[0]):  # type: ignore[arg-type]
        for v in {leaf + 1, leaf - 1, 0, -leaf}:
            if v != leaf:
                assert at(i, v) in got, (i, v)
    inner = shown[0]
    for variant in ([], inner[1:], inner[:-1], [inner[0], *inner], [inner[1], inner[0], *inner[2:]], inner[:1]):
        assert canonical([variant, shown[1]]) in got, variant
    for text in ("", "AB CD", "abcd", "cd ab", "a", "cd", "ab ab cd"):
        assert canonical([inner, text]) in got, text
    assert canonical([shown[1], inner]) in got  # swapped at the outer level
    assert canonical([inner]) in got and canonical([inner, shown[1], shown[1]]) in got


def test_the_first_boundary_values_touch_the_nested_leaves_already() -> None:
    # Within the default count, a zero reaches the numbers inside the first argument, and a short list replaces it.
    proposal = _positional([[[-1, -2, 4, 5, 6]], [[-1, -2]]])
    args = _args(generated_cases(proposal, max_cases=40, seed=3))
    assert any(isinstance(a[0], list) and 0 in a[0] and len(a) == 1 for a in args if a)
    assert any(isinstance(a[0], list) and len(a[0]) == 1 for a in args if a)


def test_empty_values_get_non_empty_neighbours() -> None:
    args = _args(generated_cases(_positional([[""]]), max_cases=40, seed=1))
    assert any(isinstance(a[0], str) and a[0] for a in args if len(a) == 1)
    # An empty list is filled with what its siblings hold: a list of strings where a string is shown next to it.
    args = _args(generated_cases(_positional([[[], "john"]]), max_cases=40, seed=1))
    assert [["john"], "john"] in args and [["john", "john"], "john"] in args
    # With nothing next to it, the simplest values of its kind, one and then repeated.
    assert [[0]] in _args(generated_cases(_positional([[[]]]), max_cases=40, seed=1))
    assert [[0, 0]] in _args(generated_cases(_positional([[[]]]), max_cases=40, seed=1))


def test_a_share_of_the_draws_has_the_shape_of_a_shown_example() -> None:
    proposal = _positional([[[1, 3, -5, 2], "ab"], [[7, 0], "ba"]])
    cases = generated_cases(proposal, max_cases=200, seed=4)[100:]  # the draws (boundary values take at most half)
    shaped = [a for a in _args(cases) if isinstance(a, list) and len(a) == 2
              and isinstance(a[0], list) and all(isinstance(x, int) and not isinstance(x, bool) for x in a[0])
              and isinstance(a[1], str)]
    assert len(shaped) >= 30
    lengths = {len(a[0]) for a in shaped}
    assert {0, 6} <= lengths <= set(range(7)) and len(lengths) >= 5  # lengths 0..len+2 of the shown lists
    numbers = [x for a in shaped for x in a[0]]
    assert min(numbers) < 0 < max(numbers) and max(abs(x) for x in numbers) <= 20  # the shown scale, both signs
    texts = {a[1] for a in shaped}
    assert len(texts) >= 10 and all(set(t) <= {"a", "b", " "} for t in texts)  # their alphabet, words joined


def test_draws_shaped_like_an_object_keep_its_keys() -> None:
    proposal = parse_proposal({
        "name": "configured", "description": "A JSON config in, a flag out.", "side_effect_class": "READ_ONLY",
        "inputs": [{"name": "config", "type": "json"}], "outputs": [{"name": "ok", "type": "bool"}],
        "examples": [{"input": {"config": {"size": 3, "name": "x y", "tags": ["a"]}}, "expected": {"ok": True}}]})
    configs = [c["input"]["config"] for c in generated_cases(proposal, max_cases=120, seed=5)]
    keyed = [c for c in configs if isinstance(c, dict) and set(c) == {"size", "name", "tags"}
             and isinstance(c["size"], int) and isinstance(c["name"], str) and isinstance(c["tags"], list)]
    assert len({canonical(c) for c in keyed}) >= 30


def test_words_the_description_quotes_are_drawn() -> None:
    proposal = _positional([[""], ["three"]], description="A space-delimited string of the numerals 'zero' to "
                           "'nine'. Valid choices are 'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', "
                           "'eight' and 'nine'. Return them sorted.")
    texts = [a[0] for a in _args(generated_cases(proposal, max_cases=120, seed=2)) if len(a) == 1
             and isinstance(a[0], str)]
    words = {w for t in texts for w in t.split()}
    assert len(words & {"zero", "one", "two", "four", "five", "six", "seven", "eight", "nine"}) >= 6, words
    assert any(len(t.split()) >= 2 and set(t.split()) <= {"zero", "one", "two", "three", "four", "five", "six",
                                                           "seven", "eight", "nine"} for t in texts)


def test_bounded_on_a_large_nested_example() -> None:
    big = [[list(range(i, i + 50)) for i in range(40)], "x" * 500, {f"k{i}": i for i in range(200)}]
    proposal = _positional([big])
    t0 = time.monotonic()
    cases = generated_cases(proposal, max_cases=40, seed=1)
    assert time.monotonic() - t0 < 3.0
    assert len(cases) == 40


def test_shape_aware_values_are_never_near_a_holdout() -> None:
    proposal = _positional([[[1, 2, 3], "abc"]], holdouts=[[[4242, 31337], "zebraholdout"]])
    leaves: list[Any] = []

    def walk(v: Any) -> None:
        if isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            leaves.extend(v)
            for x in v.values():
                walk(x)
        else:
            leaves.append(v)

    walk(_args(generated_cases(proposal, max_cases=300, seed=8)))
    assert not any(isinstance(v, str) and "zebr" in v for v in leaves)
    assert not {v for v in leaves if isinstance(v, int | float)} & {4241, 4242, 4243, 31336, 31337, 31338}
