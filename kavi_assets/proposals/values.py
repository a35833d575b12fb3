"""JSON values against the proposal's field types (FieldSpec): one reading of the contract, shared by `kavi holdout
add` (a person's expected output) and the differential gate (a skill's output on a generated input)."""

import math
import re
from dataclasses import dataclass
from typing import Any

PRIMITIVE_TYPES = "str|int|float|bool|json"
# The FieldSpec type grammar: a primitive, list[X] or dict[str, X] (X a primitive), optionally `| None`.
TYPE_RE = re.compile(
    rf"^(?:(?P<base>{PRIMITIVE_TYPES})|list\[(?P<list_item>{PRIMITIVE_TYPES})\]"
    rf"|dict\[str, ?(?P<dict_item>{PRIMITIVE_TYPES})\])(?P<opt> \| None)?$"
)


@dataclass(frozen=True)
class FieldType:
    """A FieldSpec type, parsed: `base` is str, int, float, bool, json, list or dict; `item` the element type."""

    base: str
    item: str | None
    optional: bool


def parse_type(text: str) -> FieldType:
    hit = TYPE_RE.fullmatch(text.strip())
    if hit is None:
        raise ValueError(f"unsupported field type {text!r}")
    optional = hit.group("opt") is not None
    if hit.group("list_item"):
        return FieldType("list", hit.group("list_item"), optional)
    if hit.group("dict_item"):
        return FieldType("dict", hit.group("dict_item"), optional)
    return FieldType(hit.group("base"), None, optional)


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
    ftype = parse_type(type_name)
    if value is None and ftype.optional:
        return True
    if ftype.base == "list":
        return isinstance(value, list) and all(primitive_matches(ftype.item or "json", v) for v in value)
    if ftype.base == "dict":
        return isinstance(value, dict) and all(isinstance(k, str) and primitive_matches(ftype.item or "json", v)
                                               for k, v in value.items())
    return primitive_matches(ftype.base, value)
