"""The policy file: the packaged default, and user files that may only tighten it."""

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kavi.proposals.yaml_bounds import SAFE_LOADER

DEFAULT_POLICY = Path(__file__).resolve().parent / "default_policy.yaml"
# The capability map of the standard library (and the third-party modules a skill may meet): the `modules` section
# of the default policy, kept in its own file because it is long.
CAPABILITY_MAP = Path(__file__).resolve().parent / "capability_map.yaml"
Verdict = Literal["pure", "mixed", "needs", "refused"]
IMPORTABLE: tuple[Verdict, ...] = ("pure", "mixed")


class PolicyError(ValueError):
    """A policy file that cannot be used (unreadable, invalid, or trying to widen the default)."""


class Refusal(BaseModel):
    """Why one name (an attribute of a module, a builtin, an attribute of the values a module returns) is refused,
    and the allowed way to do what it does. An empty rule or instead takes the module's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str = Field(min_length=1)
    rule: str = ""
    instead: str = ""


class ModuleEntry(BaseModel):
    """One module's verdict in the capability map (see capability_map.yaml for what each verdict means)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Verdict
    reason: str = Field(min_length=1)
    rule: str = "POL-IMPORT"
    needs: str | None = None
    instead: str = ""
    same_as: str | None = None
    pure: list[str] | None = None
    refuse: dict[str, Refusal] = Field(default_factory=dict)
    objects: dict[str, Refusal] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _complete(self) -> "ModuleEntry":
        if self.verdict != "pure" and not self.instead and self.same_as is None:
            raise ValueError(f"a {self.verdict} module names the allowed way (`instead`)")
        if self.verdict == "needs" and self.needs not in ("READ_ONLY", "FILE_WRITE", "NETWORK", "SECRET_READ"):
            raise ValueError("a `needs` module names the side-effect class whose handle gives the capability")
        if self.verdict == "mixed" and self.pure is None and not self.refuse and not self.objects \
                and self.same_as is None:
            raise ValueError("a mixed module lists its pure attributes (`pure`) or its refused ones (`refuse`)")
        return self

    def refusal(self, attr: str) -> Refusal | None:
        """Why `attr` of this module is refused (None: it is in the pure part)."""
        if self.verdict not in IMPORTABLE:
            return Refusal(reason=self.reason, rule=self.rule, instead=self.instead)
        found = self.refuse.get(attr)
        if found is not None:
            return found.model_copy(update={"rule": found.rule or self.rule, "instead": found.instead or self.instead})
        if self.pure is not None and attr not in self.pure:
            return Refusal(reason=f"not in the pure part of the module ({self.reason})", rule=self.rule,
                           instead=self.instead)
        return None


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = 1
    imports: dict[str, list[str]]
    denied_names: dict[str, str]
    allowed_dunders: list[str]
    allowed_dunder_methods: list[str]
    denied_attributes: list[str]
    allowed_decorators: list[str]
    import_time_calls: list[str]
    import_time_methods: list[str] = Field(default_factory=list)
    handles: dict[str, dict[str, str]] = Field(default_factory=dict)
    # Builtins, attributes and rules, each with the allowed way a refusal names.
    alternatives: dict[str, Refusal] = Field(default_factory=dict)
    modules: dict[str, ModuleEntry] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _imports_in_map(self) -> "Policy":
        """Every importable module is decided by the map: nothing is allowed that the map does not call pure."""
        for mods in self.imports.values():
            for m in mods:
                entry = self.module_entry(m)
                if entry is None or entry[1].verdict not in IMPORTABLE:
                    raise ValueError(f"import {m!r} is allowed but the capability map does not call it pure or mixed")
        for listed in self.modules.values():
            if listed.same_as is not None and listed.same_as not in self.modules:
                raise ValueError(f"same_as {listed.same_as!r} is not in the capability map")
        return self

    def allowed_imports(self, side_effect: str) -> frozenset[str]:
        return frozenset(self.imports.get("all", [])) | frozenset(self.imports.get(side_effect, []))

    def module_entry(self, module: str) -> tuple[str, ModuleEntry] | None:
        """The map entry that decides `module`, and the name it is listed under: its own, or the nearest listed
        package's when that package is pure, needs a class or is refused (a mixed package lists its submodules:
        an unlisted one is undecided, so refused). Private parts (`_x`) below the top level are never inherited."""
        parts = module.split(".")
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            entry = self.modules.get(name)
            if entry is None:
                continue
            if entry.same_as is not None:
                base = self.modules[entry.same_as]
                entry = base.model_copy(update={"reason": entry.reason})
            if i == len(parts):
                return name, entry
            below = parts[i:]
            if entry.verdict == "mixed" or any(p.startswith("_") for p in below):
                return None
            return name, entry
        return None

    def importable(self, module: str, side_effect: str) -> bool:
        """The map calls `module` pure or mixed, and the policy's import list (which a user file may shorten)
        names it or one of its packages."""
        entry = self.module_entry(module)
        if entry is None or entry[1].verdict not in IMPORTABLE:
            return False
        allowed = self.allowed_imports(side_effect)
        parts = module.split(".")
        return any(".".join(parts[:i]) in allowed for i in range(len(parts), 0, -1))

    def object_refusals(self, modules: set[str]) -> dict[str, Refusal]:
        """Attribute names refused because a module the skill imports returns values that carry them."""
        found: dict[str, Refusal] = {}
        for m in modules:
            entry = self.module_entry(m)
            if entry is not None:
                for name, refusal in entry[1].objects.items():
                    found.setdefault(name, refusal.model_copy(update={"rule": refusal.rule or entry[1].rule}))
        return found

    def alternative(self, key: str) -> str:
        """The allowed way for a refused builtin, attribute or rule ('' when the policy names none)."""
        found = self.alternatives.get(key)
        return found.instead if found is not None else ""


def _read(path: Path) -> dict[str, Any]:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    except OSError as err:
        raise PolicyError(f"{path}: cannot read the policy file ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise PolicyError(f"{path}: the policy file is not valid YAML: {err}") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: a policy file is a mapping")
    return data


_default: Policy | None = None


def _default_data() -> dict[str, Any]:
    data = _read(DEFAULT_POLICY)
    data["modules"] = _read(CAPABILITY_MAP).get("modules", {})
    return data


def default_policy() -> Policy:
    global _default
    if _default is None:
        _default = Policy.model_validate(_default_data())
    return _default


def _tighten(base: Policy, user: dict[str, Any], source: Path) -> Policy:
    widened: list[str] = []
    merged = base.model_dump()
    for key, value in user.items():
        if key not in merged:
            raise PolicyError(f"{source}: unknown policy key {key!r}")
        if key == "imports":
            for cls, mods in value.items():
                allowed = set(base.imports.get("all", [])) | set(base.imports.get(cls, []))
                widened += [f"import {m} ({cls})" for m in mods if m not in allowed]
            merged["imports"] = {cls: list(value.get(cls, [])) for cls in base.imports}
        elif key in ("allowed_dunders", "allowed_dunder_methods", "allowed_decorators", "import_time_calls",
                     "import_time_methods"):
            widened += [f"{key}: {v}" for v in value if v not in getattr(base, key)]
            merged[key] = list(value)
        elif key == "denied_names":
            missing = [n for n in base.denied_names if n not in value]
            widened += [f"denied_names drops {n}" for n in missing]
            merged[key] = {**base.denied_names, **value}
        elif key == "denied_attributes":
            merged[key] = sorted(set(base.denied_attributes) | set(value))
        elif key == "modules":
            # An entry may only be refused (or restated as it is): a user cannot make a module more available.
            for mod, entry in (value or {}).items():
                base_entry = base.modules.get(mod)
                restated = base_entry is not None and entry == base_entry.model_dump(exclude_defaults=True)
                if not (isinstance(entry, dict) and entry.get("verdict") == "refused") and not restated:
                    widened.append(f"modules: {mod} may only be refused")
            merged[key] = {**merged[key], **(value or {})}
        elif key == "alternatives":
            widened.append("alternatives cannot be changed")
        elif key == "handles":
            if value != base.handles:
                widened.append("handles cannot be changed")
        elif key == "version":
            merged[key] = value
    refused = {m for m, e in (user.get("modules") or {}).items()
               if isinstance(e, dict) and e.get("verdict") == "refused"}
    if refused:
        merged["imports"] = {cls: [m for m in mods if not any(m == r or m.startswith(r + ".") for r in refused)]
                             for cls, mods in merged["imports"].items()}
    if widened:
        raise PolicyError(f"{source}: a policy file may only tighten the default policy; it widens: "
                          + "; ".join(widened))
    try:
        return Policy.model_validate(merged)
    except ValidationError as err:
        raise PolicyError(f"{source}: invalid policy: {err.errors()[0]['msg']}") from None


def load_policy(path: Path | None = None) -> Policy:
    """The default policy, tightened by `path` when given."""
    base = default_policy()
    if path is None:
        return base
    return _tighten(base, _read(path), path)


def policy_digest(policy: Policy) -> str:
    return hashlib.sha256(json.dumps(policy.model_dump(), sort_keys=True).encode()).hexdigest()
