"""A skill's input and output at the boundary: validation messages, output as JSON, the published input schema.
Used where the skill runs (the contained worker) and where it is described."""

import json
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from kavi.runtime.text import escape_text
from kavi.skills.base import BaseSkill


def describe_validation_error(exc: ValidationError) -> str:
    """One clause per failing field: `field.path: message`."""
    clauses = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err.get("loc", ())) or "(whole input)"
        clauses.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(clauses)


def output_json(output: BaseModel) -> str:
    """The output as JSON text; one pydantic cannot encode (a lone surrogate) is written with its characters escaped."""
    try:
        return output.model_dump_json()
    except PydanticSerializationError:
        return escape_text(json.dumps(output.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False,
                                      default=str))


def closed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with `additionalProperties: false` on every object that names its properties, nested and in `$defs`
    included: the input schema the runtime enforces (a field it does not name is refused), as published."""

    def close(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        out = dict(node)
        for key in ("properties", "$defs", "definitions", "patternProperties"):
            if isinstance(out.get(key), dict):
                out[key] = {name: close(sub) for name, sub in out[key].items()}
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            if isinstance(out.get(key), list):
                out[key] = [close(sub) for sub in out[key]]
        for key in ("items", "not", "additionalProperties"):
            if isinstance(out.get(key), dict):
                out[key] = close(out[key])
        if isinstance(out.get("properties"), dict) and not isinstance(out.get("additionalProperties"), dict):
            out["additionalProperties"] = False
        return out

    closed: dict[str, Any] = close(schema)
    return closed


def input_schema_of(cls: type[BaseSkill[Any, Any]]) -> dict[str, Any]:
    """The input schema a trusted skill is published with."""
    return closed_schema(cls.input_model.model_json_schema())
