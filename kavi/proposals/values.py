"""JSON values against the proposal's field types (FieldSpec): one reading of the contract, shared by `kavi holdout
add` (a person's expected output) and the differential gate (a skill's output on a generated input)."""

import math
import re
from collections.abc import Mapping, Sequence
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


_JSON_PRIMITIVES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"}, "int": {"type": "integer"}, "float": {"type": "number"}, "bool": {"type": "boolean"},
    "json": {},
}


def type_json_schema(type_name: str) -> dict[str, Any]:
    """The JSON Schema of one FieldSpec type (for agents: `kavi serve`, `kavi tools`), from the same grammar."""
    ft = parse_type(type_name)
    if ft.base == "list":
        schema: dict[str, Any] = {"type": "array", "items": dict(_JSON_PRIMITIVES[ft.item or "json"])}
    elif ft.base == "dict":
        schema = {"type": "object", "additionalProperties": dict(_JSON_PRIMITIVES[ft.item or "json"])}
    else:
        schema = dict(_JSON_PRIMITIVES[ft.base])
    return {"anyOf": [schema, {"type": "null"}]} if ft.optional else schema


def fields_json_schema(fields: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """An object schema for FieldSpec dicts (name, type, description, required): what a skill's pydantic model says,
    for a trusted artifact that has no model of its own (a decomposed parent's composition)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in fields:
        name = str(f["name"])
        prop = type_json_schema(str(f["type"]))
        if f.get("description"):
            prop = {**prop, "description": str(f["description"])}
        properties[name] = prop
        if f.get("required", True) and not parse_type(str(f["type"])).optional:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
