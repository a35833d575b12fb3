"""The trusted skills as agent tools: one tool per trusted version, described for MCP, OpenAI and Anthropic.

The current version of a skill is the tool NAME; every earlier trusted version is NAME__vN (MCP tool names may
not hold `@`, and OpenAI's and Anthropic's allow only letters, digits, `_` and `-`; a proposal name never holds
two underscores in a row, so NAME__vN cannot be another skill's name). NAME__vN of the current version is
accepted too, for a caller that pins it.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kavi.proposals.model import NAME_RE
from kavi.runtime.errors import RuntimeRefusal
from kavi.runtime.trust import TrustedSkill, TrustLoader
from kavi.skills.base import SideEffectClass

SEARCH_TOOL = "search_skills"
MAX_NAME_CHARS = 64  # the proposal model's bound on a name
META_PREFIX = "kavi/"
_PINNED = re.compile(r"^([a-z][a-z0-9]*(?:_[a-z0-9]+)*)__v([1-9][0-9]{0,8})$")

# MCP's annotations are hints for the agent's host: what a call may do to the world.
ANNOTATIONS: dict[SideEffectClass, dict[str, bool]] = {
    SideEffectClass.READ_ONLY: {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False},
    SideEffectClass.FILE_WRITE: {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False},
    SideEffectClass.NETWORK: {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": True},
    # Reads the secrets it declared and changes nothing; the host still should know it touches secrets (meta).
    SideEffectClass.SECRET_READ: {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False},
}

SEARCH_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 1000,
                  "description": "what the skill should do, in words (e.g. 'count the words of a text')"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
    },
    "required": ["query"],
    "additionalProperties": False,
}
SEARCH_DESCRIPTION = ("Search the forge's trusted skills by what they do, in your own words (by meaning and by "
                      "words, as `kavi search` ranks). Look here before asking for a new skill: a close match can be "
                      "called as a tool.")


@dataclass(frozen=True)
class ServePolicy:
    """Which trusted skills are served: READ_ONLY always; other classes and single skills only when opted in."""

    allow_classes: frozenset[SideEffectClass] = frozenset({SideEffectClass.READ_ONLY})
    allow_skills: frozenset[str] = frozenset()

    def serves(self, name: str, side_effect_class: SideEffectClass) -> bool:
        return side_effect_class in self.allow_classes or name in self.allow_skills

    def why_not(self, name: str, side_effect_class: SideEffectClass) -> str:
        return (f"{name} is {side_effect_class.value} and is not served: start the server with "
                f"--allow {side_effect_class.value} or --allow-skill {name}")


@dataclass(frozen=True)
class ToolSpec:
    """One trusted version as a tool."""

    tool_name: str
    skill: TrustedSkill
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    approved_by: str | None
    report_id: str | None
    latest: bool
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return self.skill.ref

    @property
    def annotations(self) -> dict[str, Any]:
        return {"title": self.ref, **ANNOTATIONS[self.skill.side_effect_class]}


def pinned_name(name: str, version: int) -> str:
    return f"{name}__v{version}"


def tool_ref(tool_name: str) -> str | None:
    """The runtime reference (NAME or NAME@N) a tool name stands for, or None if it cannot name a skill (the
    proposal-name rules: a client's string never reaches the ledger or a path unless it is a valid name)."""
    if len(tool_name) > MAX_NAME_CHARS + 12:
        return None
    m = _PINNED.fullmatch(tool_name)
    name, version = (m.group(1), m.group(2)) if m else (tool_name, None)
    if len(name) > MAX_NAME_CHARS or not NAME_RE.fullmatch(name):
        return None
    return name if version is None else f"{name}@{version}"


@dataclass
class Catalog:
    """The tools of one ledger state, and why any trusted version is left out."""

    tools: dict[str, ToolSpec] = field(default_factory=dict)
    withheld: dict[str, str] = field(default_factory=dict)  # tool name -> why it is not served

    @property
    def key(self) -> frozenset[tuple[str, str]]:
        """What a client's tool list depends on: names and the content they run."""
        return frozenset((t.tool_name, t.skill.sha256) for t in self.tools.values())


def build_catalog(by_name: Mapping[str, Mapping[int, TrustedSkill]], meta: Mapping[tuple[str, int], Any],
                  policy: ServePolicy, loader: TrustLoader) -> Catalog:
    """Tools for every trusted version the policy serves. Each is hash-checked here and loaded in a contained worker
    (one for all of them) for its schemas; one that fails to load is withheld with the reason, and a call to it is
    refused."""
    from kavi.runtime.executor import COMPOSITION_SUFFIX, describe_trusted

    served = [skill for name in sorted(by_name) for skill in by_name[name].values()
              if policy.serves(name, skill.side_effect_class) and not str(skill.path).endswith(COMPOSITION_SUFFIX)]
    describe_trusted(served, loader)  # one worker describes them all; each `_schemas` below reads the result
    catalog = Catalog()
    for name in sorted(by_name):
        versions = by_name[name]
        if not versions:
            continue
        newest = max(versions)
        for version in sorted(versions):
            skill = versions[version]
            tool_name = name if version == newest else pinned_name(name, version)
            if not policy.serves(name, skill.side_effect_class):
                catalog.withheld[tool_name] = policy.why_not(name, skill.side_effect_class)
                continue
            try:
                description, input_schema, output_schema = _schemas(loader, skill, name)
            except RuntimeRefusal as exc:
                catalog.withheld[tool_name] = f"{skill.ref} is refused: {exc}"
                continue
            info = meta.get((name, version))
            approved_by = getattr(info, "approved_by", None)
            report_id = getattr(info, "build_id", None)
            catalog.tools[tool_name] = ToolSpec(
                tool_name=tool_name, skill=skill,
                description=f"{description} [{skill.ref}, {skill.side_effect_class.value}]",
                input_schema=input_schema,
                output_schema=output_schema,
                approved_by=approved_by, report_id=report_id, latest=version == newest,
                meta={f"{META_PREFIX}side_effect_class": skill.side_effect_class.value,
                      f"{META_PREFIX}version": version, f"{META_PREFIX}ref": skill.ref,
                      f"{META_PREFIX}content_sha256": skill.sha256,
                      f"{META_PREFIX}verification_report": report_id, f"{META_PREFIX}approved_by": approved_by,
                      f"{META_PREFIX}latest": version == newest})
    return catalog


def _schemas(loader: TrustLoader, skill: TrustedSkill, name: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Description, input and output schema of a trusted version, read through the trust loader (hash check first).
    A decomposed parent's trusted bytes are a composition, not a module: its schemas come from the parent's fields
    the composition carries, and a call runs the chain of its children (the runner `kavi run` uses)."""
    from kavi.proposals.values import fields_json_schema
    from kavi.runtime.composition import parse_doc
    from kavi.runtime.errors import SkillLoadError
    from kavi.runtime.executor import COMPOSITION_SUFFIX, describe_trusted

    if str(skill.path).endswith(COMPOSITION_SUFFIX):
        doc = parse_doc(loader.verify(skill))
        if doc is None:
            raise SkillLoadError(f"{skill.path} is not a composition")
        steps = " → ".join(str(s.get("skill")) for s in doc.get("steps", []))
        return (f"{name}: a composition of trusted skills ({steps})", fields_json_schema(doc.get("inputs", [])),
                fields_json_schema(doc.get("outputs", [])))
    described = describe_trusted([skill], loader)[0]
    if "error" in described:
        raise SkillLoadError(str(described["error"]))
    return (str(described.get("description") or name), dict(described["input_schema"]),
            dict(described["output_schema"]))


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    return schema if schema.get("type") == "object" else {"type": "object", **schema}


def as_mcp(tools: Iterable[ToolSpec], search: bool = True) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"name": t.tool_name, "title": t.ref, "description": t.description,
         "inputSchema": _object_schema(t.input_schema),
         **({"outputSchema": _object_schema(t.output_schema)} if t.output_schema else {}),
         "annotations": t.annotations, "_meta": t.meta}
        for t in tools]
    if search:
        out.append({"name": SEARCH_TOOL, "title": "search trusted skills", "description": SEARCH_DESCRIPTION,
                    "inputSchema": SEARCH_INPUT_SCHEMA,
                    "annotations": {"title": "search trusted skills", **ANNOTATIONS[SideEffectClass.READ_ONLY]},
                    "_meta": {f"{META_PREFIX}side_effect_class": SideEffectClass.READ_ONLY.value}})
    return out


def as_openai(tools: Iterable[ToolSpec], search: bool = True) -> list[dict[str, Any]]:
    """Chat Completions `tools`: {"type": "function", "function": {name, description, parameters}}."""
    return [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                              "parameters": t["inputSchema"]}}
            for t in as_mcp(tools, search)]


def as_anthropic(tools: Iterable[ToolSpec], search: bool = True) -> list[dict[str, Any]]:
    """Messages API `tools`: {name, description, input_schema}."""
    return [{"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}
            for t in as_mcp(tools, search)]


FORMATS = {"mcp": as_mcp, "openai": as_openai, "anthropic": as_anthropic}
