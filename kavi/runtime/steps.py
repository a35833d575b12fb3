"""A chain step and how its input is built: literal `input`, `input_template` placeholders and `from_prev` dot paths
into a source value (the previous step's output in a chain, one document in a composition)."""

import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kavi.runtime.errors import ChainMappingError
from kavi.runtime.records import to_json

__all__ = ["ChainMappingError", "ChainStep", "build_step_input", "placeholders", "resolve_path"]

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_INDEX = re.compile(r"^-?\d+$")


def placeholders(value: Any) -> Iterator[str]:
    """The `{dot.path}` placeholders in a template value, wherever they are nested."""
    if isinstance(value, str):
        for match in _PLACEHOLDER.finditer(value):
            if match.group(1) is not None:
                yield match.group(1)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from placeholders(item)
    elif isinstance(value, list):
        for item in value:
            yield from placeholders(item)


class ChainStep(BaseModel):
    """One step: which skill, and how its input is built."""

    model_config = ConfigDict(extra="forbid")

    skill: str = Field(min_length=1)
    input: dict[str, Any] | None = None
    input_template: dict[str, Any] | None = None
    from_prev: dict[str, str] = Field(default_factory=dict)
    from_step: int | None = None

    @model_validator(mode="after")
    def _no_overlap(self) -> "ChainStep":
        seen: dict[str, str] = {}
        for source, keys in (
            ("input", self.input or {}),
            ("input_template", self.input_template or {}),
            ("from_prev", self.from_prev),
        ):
            for key in keys:
                if key in seen:
                    raise ValueError(f"field {key!r} is set by both {seen[key]} and {source}; set it once")
                seen[key] = source
        for target, path in self.from_prev.items():
            if not path.strip():
                raise ValueError(f"from_prev[{target!r}] has an empty path")
        for path in placeholders(self.input_template or {}):
            if not path.strip():
                raise ValueError("input_template has an empty placeholder '{}' (write '{{' for a literal brace)")
        return self

    @property
    def maps_from_source(self) -> bool:
        return bool(self.from_prev) or any(True for _ in placeholders(self.input_template or {}))


def resolve_path(data: Any, path: str) -> Any:
    """Follow a dot path (`results.0.path`) through dicts and lists; ChainMappingError when it breaks."""
    current = data
    walked: list[str] = []
    for part in path.split("."):
        where = ".".join(walked) or "(output)"
        if isinstance(current, Mapping):
            if part not in current:
                keys = ", ".join(sorted(map(str, current))) or "none"
                raise ChainMappingError(f"path {path!r}: no key {part!r} in {where} (keys: {keys})")
            current = current[part]
        elif isinstance(current, list):
            if not _INDEX.fullmatch(part):
                raise ChainMappingError(f"path {path!r}: {where} is a list; {part!r} is not an index")
            idx = int(part)
            if not -len(current) <= idx < len(current):
                raise ChainMappingError(
                    f"path {path!r}: index {idx} is out of range for {where} ({len(current)} items)"
                )
            current = current[idx]
        else:
            raise ChainMappingError(
                f"path {path!r}: cannot look up {part!r} in {where}, a {type(current).__name__} value"
            )
        walked.append(part)
    return current


def _render(value: Any, source: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _render(v, source) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, source) for v in value]
    if not isinstance(value, str):
        return value
    whole = _PLACEHOLDER.fullmatch(value)
    if whole is not None and whole.group(1) is not None:
        return resolve_path(source, whole.group(1).strip())

    def substitute(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return match.group(0)[0]
        found = resolve_path(source, match.group(1).strip())
        return found if isinstance(found, str) else to_json(found)

    return _PLACEHOLDER.sub(substitute, value)


def build_step_input(step: ChainStep, source_output: Any) -> dict[str, Any]:
    """The step's input: literal `input`, then the rendered template, then `from_prev` values."""
    built: dict[str, Any] = dict(step.input or {})
    if step.input_template:
        built.update(_render(step.input_template, source_output))
    for target, path in step.from_prev.items():
        built[target] = resolve_path(source_output, path.strip())
    return built
