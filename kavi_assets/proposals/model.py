"""The proposal (SKILL_SPEC) model, its loader for YAML/JSON, and the errors it reports."""

import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from kavi_assets.skills.base import SideEffectClass

NAME_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
FIELD_RE = re.compile(r"^[a-z_][a-z0-9_]*$")
SECRET_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
PRIMITIVES = ("str", "int", "float", "bool")
_TYPE_RE = re.compile(
    r"^(?P<base>str|int|float|bool|json|list\[(str|int|float|bool|json)\]|dict\[str, ?(str|int|float|bool|json)\])"
    r"(?P<opt> \| None)?$"
)


class ProposalError(ValueError):
    """A proposal that cannot be used, with a message a person can act on."""


def _reserved_names() -> frozenset[str]:
    return frozenset(sys.stdlib_module_names) | frozenset(sys.builtin_module_names) | {"kavi_assets", "skills"}


class FieldSpec(BaseModel):
    """One input or output field of a skill."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    type: str = Field(description="str, int, float, bool, json (any JSON value), list[X], dict[str, X], "
                                  "optionally '| None'")
    description: str = ""
    required: bool = True

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not FIELD_RE.match(v) or keyword.iskeyword(v):
            raise ValueError(f"field name {v!r} must be a lowercase Python identifier")
        return v

    @field_validator("type")
    @classmethod
    def _type(cls, v: str) -> str:
        v = v.strip()
        if not _TYPE_RE.match(v):
            raise ValueError(
                f"type {v!r} is not supported; use str, int, float, bool, json, list[X] or dict[str, X] "
                "(X a primitive), optionally followed by ' | None'"
            )
        return v


class Example(BaseModel):
    """An input and its expected output, with the fixtures the skill's handles serve."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: dict[str, Any]
    expected: dict[str, Any]
    vault_files: dict[str, str] = Field(default_factory=dict, description="files in the vault before the run")
    http_responses: dict[str, Any] = Field(default_factory=dict, description="URL -> JSON the HTTP handle returns")
    secrets: dict[str, str] = Field(default_factory=dict, description="secret values for SECRET_READ skills")


class Proposal(BaseModel):
    """SKILL_SPEC: what a skill must do and may touch. The builder never sees `holdout_examples`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(max_length=64, description="snake_case identifier; the partition key")
    description: str = Field(min_length=10, max_length=4000)
    inputs: list[FieldSpec] = Field(min_length=1)
    outputs: list[FieldSpec] = Field(min_length=1)
    side_effect_class: SideEffectClass
    examples: list[Example] = Field(min_length=1)
    holdout_examples: list[Example] = Field(default_factory=list)
    required_secrets: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError(f"name {v!r} must be snake_case: lowercase letters, digits and single underscores")
        if keyword.iskeyword(v) or keyword.issoftkeyword(v):
            raise ValueError(f"name {v!r} is a Python keyword")
        if v in _reserved_names():
            raise ValueError(f"name {v!r} shadows a standard-library or builtin module")
        return v

    @field_validator("required_secrets")
    @classmethod
    def _secrets(cls, v: list[str]) -> list[str]:
        for s in v:
            if not SECRET_RE.match(s):
                raise ValueError(f"secret name {s!r} must be UPPER_SNAKE_CASE")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "Proposal":
        for group, fields in (("inputs", self.inputs), ("outputs", self.outputs)):
            names = [f.name for f in fields]
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"{group} repeat field names: {', '.join(dupes)}")
        if self.required_secrets and self.side_effect_class is not SideEffectClass.SECRET_READ:
            raise ValueError("required_secrets is only allowed with side_effect_class SECRET_READ")
        if self.side_effect_class is SideEffectClass.SECRET_READ and not self.required_secrets:
            raise ValueError("a SECRET_READ proposal must list its required_secrets")
        in_names = {f.name for f in self.inputs}
        required_in = {f.name for f in self.inputs if f.required and not f.type.endswith("| None")}
        out_names = {f.name for f in self.outputs}
        for label, exs in (("examples", self.examples), ("holdout_examples", self.holdout_examples)):
            for i, ex in enumerate(exs):
                unknown = set(ex.input) - in_names
                if unknown:
                    raise ValueError(f"{label}[{i}].input has unknown fields: {', '.join(sorted(unknown))}")
                missing = required_in - set(ex.input)
                if missing:
                    raise ValueError(f"{label}[{i}].input lacks required fields: {', '.join(sorted(missing))}")
                unknown_out = set(ex.expected) - out_names
                if unknown_out:
                    raise ValueError(
                        f"{label}[{i}].expected has unknown fields: {', '.join(sorted(unknown_out))}"
                    )
                undeclared = set(ex.secrets) - set(self.required_secrets)
                if undeclared:
                    raise ValueError(f"{label}[{i}] uses undeclared secrets: {', '.join(sorted(undeclared))}")
        return self

    @property
    def class_name(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))

    def builder_view(self) -> dict[str, Any]:
        """The spec as the builder may see it: everything but the holdout examples."""
        data = self.model_dump(mode="json")
        data.pop("holdout_examples", None)
        return data

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


def _format_validation_error(err: ValidationError, source: str) -> str:
    lines = [f"{source}: the proposal is not valid:"]
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
        msg = e["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        lines.append(f"  - {loc}: {msg}")
    return "\n".join(lines)


def parse_proposal(data: Any, source: str = "proposal") -> Proposal:
    if not isinstance(data, dict):
        raise ProposalError(f"{source}: a proposal must be a mapping of fields, got {type(data).__name__}")
    try:
        return Proposal.model_validate(data)
    except ValidationError as err:
        raise ProposalError(_format_validation_error(err, source)) from None


def parse_proposal_text(text: str, source: str = "proposal", fmt: str | None = None) -> Proposal:
    """Parse YAML or JSON text (JSON is YAML, but JSON errors read better from json)."""
    fmt = fmt or ("json" if text.lstrip().startswith("{") else "yaml")
    try:
        data = json.loads(text) if fmt == "json" else yaml.safe_load(text)
    except json.JSONDecodeError as err:
        raise ProposalError(f"{source}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ProposalError(f"{source}: malformed YAML{where}: {problem}") from None
    return parse_proposal(data, source)


def load_proposal(path: Path) -> Proposal:
    if not path.is_file():
        raise ProposalError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix not in {".yaml", ".yml", ".json"}:
        raise ProposalError(f"{path}: a proposal file must end in .yaml, .yml or .json")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ProposalError(f"{path}: not UTF-8 text") from None
    return parse_proposal_text(text, str(path), "json" if suffix == ".json" else "yaml")


def proposal_json_schema() -> dict[str, Any]:
    schema = Proposal.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Kavi Forge skill proposal"
    return schema
