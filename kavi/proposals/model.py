"""The proposal (SKILL_SPEC) model, its loader for YAML/JSON, and the errors it reports."""

import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from kavi.proposals.bounds import (
    MAX_RUN_INPUT_BYTES,
    PROPOSAL_BOUNDS,
    BoundsError,
    check_regular_file,
    parse_json_bounded,
    read_bounded,
)
from kavi.proposals.paths import check_vault_relpaths
from kavi.proposals.text import check_fixture_url, check_text, printable
from kavi.proposals.values import TYPE_RE
from kavi.skills.base import SideEffectClass

MAX_TIMEOUT_S = 3600.0  # the most a proposal may ask for; the runtime's own maximum is a setting

# Names, field names and secret names are checked with re.fullmatch: `$` alone would accept a trailing newline.
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
FIELD_RE = re.compile(r"^[a-z_][a-z0-9_]*$")
SECRET_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
PRIMITIVES = ("str", "int", "float", "bool")

# What one proposal may hold (the file's own bounds are in kavi.proposals.bounds).
MAX_EXAMPLES = 100  # each of examples and holdout_examples
MAX_EXAMPLES_CHARS = 128 * 1024  # the JSON of all examples and holdout examples together
MAX_FIELDS = 32  # each of inputs and outputs
MAX_SECRETS = 16
MAX_FIXTURES = 64  # vault_files and http_responses of one example, each
MAX_FIELD_DESCRIPTION_CHARS = 1000


# Validation context for a spec read back from the ledger: it passed the doors of its day, so the checks added
# since (control characters in text, fixture URL schemes) do not make a recorded proposal unreadable.
RECORDED: dict[str, Any] = {"recorded": True}


class ProposalError(ValueError):
    """A proposal that cannot be used, with a message a person can act on."""


def _recorded(info: ValidationInfo) -> bool:
    return isinstance(info.context, dict) and bool(info.context.get("recorded"))


def _names(keys: set[str]) -> str:
    return ", ".join(printable(k) for k in sorted(keys))


def _reserved_names() -> frozenset[str]:
    return frozenset(sys.stdlib_module_names) | frozenset(sys.builtin_module_names) | {"kavi", "kavi_assets", "skills"}


def _without_absent(data: dict[str, Any], field: str) -> dict[str, Any]:
    """A model's data without an optional field that was not given: specs written before the field existed read, and
    hash, as they always did."""
    if data.get(field) is None:
        data.pop(field, None)
    return data


class FieldSpec(BaseModel):
    """One input or output field of a skill."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    type: str = Field(description="str, int, float, bool, json (any JSON value), list[X], dict[str, X], "
                                  "optionally '| None'")
    description: str = Field(default="", max_length=MAX_FIELD_DESCRIPTION_CHARS)
    required: bool = True
    # The largest value a caller may send in this input field: characters of a str, items of a list. The runtime
    # refuses a larger one, and the resource gate times the skill up to it (not up to the runtime's own bound on a
    # call's input), judging the time there. Absent from the spec's JSON when not given.
    max_size: int | None = Field(default=None, ge=1, le=MAX_RUN_INPUT_BYTES)

    @model_serializer(mode="wrap")
    def _without_absent_bound(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_absent(handler(self), "max_size")

    @property
    def sized(self) -> str | None:
        """What max_size counts for this field's type: "characters", "items", or None (a type without a size)."""
        base = self.type.split("|")[0].strip()
        return "characters" if base == "str" else "items" if base.startswith("list[") else None

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not FIELD_RE.fullmatch(v) or keyword.iskeyword(v):
            raise ValueError(f"field name {v!r} must be a lowercase Python identifier")
        return v

    @field_validator("type")
    @classmethod
    def _type(cls, v: str, info: ValidationInfo) -> str:
        if not _recorded(info):
            check_text(v, multiline=False)
        v = v.strip()
        if not TYPE_RE.fullmatch(v):
            raise ValueError(
                f"type {v!r} is not supported; use str, int, float, bool, json, list[X] or dict[str, X] "
                "(X a primitive), optionally followed by ' | None'"
            )
        return v

    @field_validator("description")
    @classmethod
    def _description(cls, v: str, info: ValidationInfo) -> str:
        return v if _recorded(info) else check_text(v, multiline=True)


class Example(BaseModel):
    """An input and its expected output, with the fixtures the skill's handles serve."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: dict[str, Any]
    expected: dict[str, Any]
    vault_files: dict[str, str] = Field(default_factory=dict, max_length=MAX_FIXTURES,
                                        description="files in the vault before the run (relative paths)")
    http_responses: dict[str, Any] = Field(default_factory=dict, max_length=MAX_FIXTURES,
                                           description="URL -> JSON the HTTP handle returns")
    secrets: dict[str, str] = Field(default_factory=dict, max_length=MAX_SECRETS,
                                    description="secret values for SECRET_READ skills")

    @field_validator("vault_files")
    @classmethod
    def _vault_paths(cls, v: dict[str, str]) -> dict[str, str]:
        check_vault_relpaths(v)
        return v

    @field_validator("http_responses")
    @classmethod
    def _fixture_urls(cls, v: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        if not _recorded(info):
            for url in v:
                check_fixture_url(url)
        return v


class Proposal(BaseModel):
    """SKILL_SPEC: what a skill must do and may touch. The builder never sees `holdout_examples`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(max_length=64, description="snake_case identifier; the partition key")
    description: str = Field(min_length=10, max_length=4000)
    inputs: list[FieldSpec] = Field(min_length=1, max_length=MAX_FIELDS)
    outputs: list[FieldSpec] = Field(min_length=1, max_length=MAX_FIELDS)
    side_effect_class: SideEffectClass
    examples: list[Example] = Field(min_length=1, max_length=MAX_EXAMPLES)
    holdout_examples: list[Example] = Field(default_factory=list, max_length=MAX_EXAMPLES)
    required_secrets: list[str] = Field(default_factory=list, max_length=MAX_SECRETS)
    # The wall-clock deadline of one run once trusted (the runtime's default when absent; the configured maximum
    # bounds it). Absent from the spec's JSON when not given, so specs without it read as they always did.
    timeout_s: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_S)
    # Inputs a person declared outside the skill's domain (answering an open question): no generated input or probe
    # asks them again. Absent from the spec's JSON when empty.
    outside_domain: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_EXAMPLES)

    @model_serializer(mode="wrap")
    def _without_absent_timeout(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = _without_absent(handler(self), "timeout_s")
        if not data.get("outside_domain"):
            data.pop("outside_domain", None)
        return data

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.fullmatch(v):
            raise ValueError(f"name {v!r} must be snake_case: lowercase letters, digits and single underscores")
        if keyword.iskeyword(v) or keyword.issoftkeyword(v):
            raise ValueError(f"name {v!r} is a Python keyword")
        if v in _reserved_names():
            raise ValueError(f"name {v!r} shadows a standard-library or builtin module")
        return v

    @field_validator("description")
    @classmethod
    def _description(cls, v: str, info: ValidationInfo) -> str:
        return v if _recorded(info) else check_text(v, multiline=True)

    @field_validator("required_secrets")
    @classmethod
    def _secrets(cls, v: list[str]) -> list[str]:
        for s in v:
            if not SECRET_RE.fullmatch(s):
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
        for f in self.outputs:
            if f.max_size is not None:
                raise ValueError(f"outputs field {f.name!r}: max_size bounds what a caller sends, so only inputs "
                                 "have one")
        for f in self.inputs:
            if f.max_size is not None and f.sized is None:
                raise ValueError(f"inputs field {f.name!r}: max_size counts the characters of a str or the items of "
                                 f"a list, not a {f.type}")
        bounds = {f.name: f.max_size for f in self.inputs if f.max_size is not None}
        out_names = {f.name for f in self.outputs}
        for label, exs in (("examples", self.examples), ("holdout_examples", self.holdout_examples)):
            for i, ex in enumerate(exs):
                unknown = set(ex.input) - in_names
                if unknown:
                    raise ValueError(f"{label}[{i}].input has unknown fields: {_names(unknown)}")
                missing = required_in - set(ex.input)
                if missing:
                    raise ValueError(f"{label}[{i}].input lacks required fields: {', '.join(sorted(missing))}")
                unknown_out = set(ex.expected) - out_names
                if unknown_out:
                    raise ValueError(
                        f"{label}[{i}].expected has unknown fields: {_names(unknown_out)}"
                    )
                for field_name, bound in bounds.items():
                    value = ex.input.get(field_name)
                    if isinstance(value, str | list) and len(value) > bound:
                        raise ValueError(f"{label}[{i}].input.{field_name} has {len(value)} "
                                         f"{'characters' if isinstance(value, str) else 'items'}, over its "
                                         f"max_size of {bound}")
                undeclared = set(ex.secrets) - set(self.required_secrets)
                if undeclared:
                    raise ValueError(f"{label}[{i}] uses undeclared secrets: {_names(undeclared)}")
        size = sum(len(json.dumps(ex.model_dump(mode="json"), separators=(",", ":")))
                   for ex in (*self.examples, *self.holdout_examples))
        if size > MAX_EXAMPLES_CHARS:
            raise ValueError(f"the examples and holdout examples hold {size} characters of JSON; at most "
                             f"{MAX_EXAMPLES_CHARS} are allowed")
        return self

    @property
    def class_name(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def input_bounds(self) -> dict[str, int]:
        """The inputs' declared max_size, by field name (only those that declare one)."""
        return {f.name: f.max_size for f in self.inputs if f.max_size is not None}

    def builder_view(self) -> dict[str, Any]:
        """The spec as the builder may see it: everything but the holdout examples."""
        data = self.model_dump(mode="json")
        data.pop("holdout_examples", None)
        return data

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


def _loc(parts: tuple[int | str, ...]) -> str:
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return text or "(top level)"


def _format_validation_error(err: ValidationError, source: str) -> str:
    """One line for one problem; a header and one line per problem when there are several."""
    items = []
    for e in err.errors(include_url=False, include_input=False):
        msg = e["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        items.append(f"{_loc(e['loc'])}: {msg}")
    if len(items) == 1:
        return f"{source}: the proposal is not valid: {items[0]}"
    return "\n".join([f"{source}: the proposal is not valid:", *(f"  - {item}" for item in items)])


def parse_proposal(data: Any, source: str = "proposal", *, recorded: bool = False) -> Proposal:
    """Validate a proposal's data; `recorded` for a spec read back from the ledger (see RECORDED)."""
    if not isinstance(data, dict):
        raise ProposalError(f"{source}: a proposal must be a mapping of fields, got {type(data).__name__}")
    try:
        return Proposal.model_validate(data, context=RECORDED if recorded else None)
    except ValidationError as err:
        raise ProposalError(_format_validation_error(err, source)) from None


def check_build_prompt(proposal: Proposal, source: str = "proposal", max_prompt_chars: int | None = None) -> None:
    """Refuse a proposal whose build prompt would not fit the model's prompt bound (KAVI_LLM_MAX_PROMPT_CHARS)."""
    from kavi.llm.prompts import check_spec_prompt, max_prompt_chars_from_env

    try:
        bound = max_prompt_chars if max_prompt_chars is not None else max_prompt_chars_from_env()
        check_spec_prompt(proposal.builder_view(), skill_name=proposal.name, class_name=proposal.class_name,
                          max_chars=bound)
    except ValueError as err:
        raise ProposalError(f"{source}: {err}") from None


def _parsed_json(text: str, source: str) -> Any:
    try:
        return parse_json_bounded(text, PROPOSAL_BOUNDS, "the proposal")
    except BoundsError as err:
        raise ProposalError(f"{source}: {err}") from None
    except json.JSONDecodeError as err:
        raise ProposalError(f"{source}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None


def _parsed_yaml(text: str, source: str) -> Any:
    """YAML text within the proposal bounds (PyYAML is imported here, by what reads YAML, not by every importer of
    the proposal model)."""
    import yaml

    from kavi.proposals.yaml_bounds import parse_yaml_bounded

    try:
        return parse_yaml_bounded(text, PROPOSAL_BOUNDS, "the proposal")
    except BoundsError as err:
        raise ProposalError(f"{source}: {err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ProposalError(f"{source}: malformed YAML{where}: {problem}") from None


def parse_proposal_text(text: str, source: str = "proposal", fmt: str | None = None, *,
                        max_prompt_chars: int | None = None) -> Proposal:
    """Parse YAML or JSON text (JSON is YAML, but JSON errors read better from json), within the bounds of
    kavi.proposals.bounds, validate it, and check that its build prompt fits the prompt bound."""
    fmt = fmt or ("json" if text.lstrip().startswith("{") else "yaml")
    data = _parsed_json(text, source) if fmt == "json" else _parsed_yaml(text, source)
    proposal = parse_proposal(data, source)
    check_build_prompt(proposal, source, max_prompt_chars)
    return proposal


def load_proposal(path: Path, *, max_prompt_chars: int | None = None) -> Proposal:
    """The one loader of proposal files (`kavi propose`, the intake sensor, `kavi demo`): bounded before it is
    read whole, parsed within bounds, validated, and its build prompt checked against the prompt bound. A
    directory, named pipe or device is refused from its type alone, before anything opens it."""
    source = printable(str(path))
    suffix = path.suffix.lower()
    try:
        check_regular_file(path)
        if suffix not in {".yaml", ".yml", ".json"}:
            raise ProposalError(f"{source}: a proposal file must end in .yaml, .yml or .json")
        raw = read_bounded(path, PROPOSAL_BOUNDS.max_bytes)
    except BoundsError as err:
        raise ProposalError(str(err)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProposalError(f"{source}: not UTF-8 text") from None
    return parse_proposal_text(text, source, "json" if suffix == ".json" else "yaml",
                               max_prompt_chars=max_prompt_chars)


def proposal_json_schema() -> dict[str, Any]:
    schema = Proposal.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Kavi Forge skill proposal"
    return schema
