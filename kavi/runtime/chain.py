"""Chains: run trusted skills in sequence, building each step's input from an earlier step's output.

A step's input is layered from `input` (literal values), `input_template` (strings with `{dot.path}`
placeholders into the source step's output; a value that is exactly one placeholder keeps its type) and
`from_prev` (field -> dot path). The source is the previous step unless `from_step` names an earlier one.
"""

import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kavi.runtime.errors import ChainMappingError, ConfirmationRequired
from kavi.runtime.executor import CAPABILITIES, SkillRunner, needs_confirmation
from kavi.runtime.records import ExecutionRecord, new_id, to_json

__all__ = ["ChainMappingError", "ChainSpec", "ChainStep", "build_step_input", "resolve_path", "run_chain"]

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_INDEX = re.compile(r"^-?\d+$")


def _placeholders(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        for match in _PLACEHOLDER.finditer(value):
            if match.group(1) is not None:
                yield match.group(1)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _placeholders(item)
    elif isinstance(value, list):
        for item in value:
            yield from _placeholders(item)


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
        for path in _placeholders(self.input_template or {}):
            if not path.strip():
                raise ValueError("input_template has an empty placeholder '{}' (write '{{' for a literal brace)")
        return self

    @property
    def maps_from_source(self) -> bool:
        return bool(self.from_prev) or any(True for _ in _placeholders(self.input_template or {}))


class ChainSpec(BaseModel):
    """A sequence of steps; by default the chain stops at the first failed step."""

    model_config = ConfigDict(extra="forbid")

    steps: list[ChainStep] = Field(min_length=1)
    stop_on_failure: bool = True

    @model_validator(mode="after")
    def _sources_exist(self) -> "ChainSpec":
        for index, step in enumerate(self.steps):
            if step.from_step is not None and not 0 <= step.from_step < index:
                raise ValueError(
                    f"step {index} ({step.skill}): from_step {step.from_step} must name an earlier step "
                    f"(0..{index - 1})"
                    if index
                    else f"step 0 ({step.skill}): from_step is set but there is no earlier step"
                )
            if index == 0 and step.maps_from_source:
                raise ValueError(f"step 0 ({step.skill}) maps from a previous step, but it is the first step")
        return self


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


def run_chain(
    runner: SkillRunner,
    spec: ChainSpec,
    *,
    confirmed: bool,
    session_id: str | None = None,
    parent_execution_id: str | None = None,
) -> list[ExecutionRecord]:
    """Run the steps in one session; each record's parent is the previous step's record.

    Every step's skill must be trusted and, when it has side effects, confirmed — checked for all steps
    before the first one runs, so a chain never stops half-way for a refusal it could have foreseen."""
    for index, step in enumerate(spec.steps):
        skill = runner.lookup(step.skill)
        if needs_confirmation(skill.side_effect_class) and not confirmed:
            raise ConfirmationRequired(
                f"chain step {index} runs {skill.name!r}, which is {skill.side_effect_class.value} "
                f"(it can {CAPABILITIES[skill.side_effect_class]}); confirm to run the chain"
            )
    session = session_id or new_id()
    records: list[ExecutionRecord] = []
    parent = parent_execution_id
    for index, step in enumerate(spec.steps):
        record = _run_step(runner, index, step, records, confirmed=confirmed, session=session, parent=parent)
        records.append(record)
        parent = record.execution_id
        if spec.stop_on_failure and not record.success:
            break
    return records


def _run_step(
    runner: SkillRunner,
    index: int,
    step: ChainStep,
    records: list[ExecutionRecord],
    *,
    confirmed: bool,
    session: str,
    parent: str | None,
) -> ExecutionRecord:
    partial: dict[str, Any] = dict(step.input or {})
    try:
        if step.maps_from_source:
            source_index = step.from_step if step.from_step is not None else index - 1
            source = records[source_index]
            if not source.success:
                raise ChainMappingError(
                    f"source step {source_index} ({source.skill_name}) failed, so there is no output to map from"
                )
            built = build_step_input(step, source.output_data())
        else:
            built = build_step_input(step, None)
    except ChainMappingError as exc:
        return runner.record_failure(
            step.skill,
            partial,
            f"ChainMappingError: step {index} ({step.skill}): {exc}",
            parent_execution_id=parent,
            session_id=session,
        )
    return runner.run(step.skill, built, confirmed=confirmed, parent_execution_id=parent, session_id=session)
