"""JSON values against the proposal's field types (FieldSpec): one reading of the contract, shared by `kavi holdout
add` (a person's expected output) and the differential gate (a skill's output on a generated input)."""

import math
from typing import Any


def is_json_value(value: Any) -> bool:
    """Whether a value is JSON: null, a bool, a string, a finite number, or lists and string-keyed objects of them.
    NaN and infinity are not JSON numbers (Python's encoder would write them anyway)."""
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(is_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_json_value(v) for k, v in value.items())
    return False


def primitive_matches(kind: str, value: Any) -> bool:
    """One value against a primitive type: `json` is any JSON value, null included; bools are not numbers; an int
    is a JSON integer (3.0 is a float); a float may be written as an integer, as JSON writes it."""
    if kind == "json":
        return is_json_value(value)
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "int":
        return isinstance(value, int)
    if kind == "float":
        return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))
    return False


def value_matches(type_name: str, value: Any) -> bool:
    """Whether a JSON value has a FieldSpec type: str, int, float, bool, json, list[X], dict[str, X], `| None`."""
    base = type_name.strip()
    if base.endswith("| None"):
        if value is None:
            return True
        base = base[: -len("| None")].strip()
    if base.startswith("list[") and base.endswith("]"):
        return isinstance(value, list) and all(primitive_matches(base[5:-1].strip(), v) for v in value)
    if base.startswith("dict[") and base.endswith("]"):
        inner = base[5:-1].split(",", 1)[1].strip()
        return isinstance(value, dict) and all(isinstance(k, str) and primitive_matches(inner, v)
                                               for k, v in value.items())
    return primitive_matches(base, value)
