"""The policy file: the packaged default, and user files that may only tighten it."""

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

DEFAULT_POLICY = Path(__file__).resolve().parent / "default_policy.yaml"


class PolicyError(ValueError):
    """A policy file that cannot be used (unreadable, invalid, or trying to widen the default)."""


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
    handles: dict[str, dict[str, str]] = Field(default_factory=dict)

    def allowed_imports(self, side_effect: str) -> frozenset[str]:
        return frozenset(self.imports.get("all", [])) | frozenset(self.imports.get(side_effect, []))


def _read(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise PolicyError(f"{path}: cannot read the policy file ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise PolicyError(f"{path}: the policy file is not valid YAML: {err}") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: a policy file is a mapping")
    return data


_default: Policy | None = None


def default_policy() -> Policy:
    global _default
    if _default is None:
        _default = Policy.model_validate(_read(DEFAULT_POLICY))
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
        elif key in ("allowed_dunders", "allowed_dunder_methods", "allowed_decorators", "import_time_calls"):
            widened += [f"{key}: {v}" for v in value if v not in getattr(base, key)]
            merged[key] = list(value)
        elif key == "denied_names":
            missing = [n for n in base.denied_names if n not in value]
            widened += [f"denied_names drops {n}" for n in missing]
            merged[key] = {**base.denied_names, **value}
        elif key == "denied_attributes":
            merged[key] = sorted(set(base.denied_attributes) | set(value))
        elif key == "handles":
            if value != base.handles:
                widened.append("handles cannot be changed")
        elif key == "version":
            merged[key] = value
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
