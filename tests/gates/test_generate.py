"""Generated inputs: every field type, deterministic for a seed, bounded, boundary values next to the shown
examples (never next to a holdout), fixtures borrowed from the examples, nothing written to disk."""

import json
import time
from pathlib import Path
from typing import Any

import pytest

from kavi_assets.gates.generate import canonical, generated_cases, parse_type
from kavi_assets.proposals.model import Proposal, parse_proposal

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
