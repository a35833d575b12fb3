"""The fingerprint of what judges a skill: the Python running the gates, the gate tools' versions, the policy files and
the gate configuration. Recorded with every verification, compared at the start of trust-reading commands and by a
sensor: when it moves, yesterday's verdicts were given by different judges and are stale until re-verified.

Cheap by design (it is computed at the start of `kavi run`): package versions come from installed metadata (read
once per process), and the policy is hashed as the bytes of its files, not parsed. A byte change that changes no
rule makes versions stale and their re-verification passes: a false alarm costs a gate run, a missed change trust.
"""

import hashlib
import importlib.util
import json
import sys
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from kavi.home import KaviHome
from kavi.settings import ADEQUACY_MAX_MUTANTS, RESOURCE_DEADLINE_S, KaviSettings, read_setting
from kavi.verdicts import ALL_GATES

# The policy files (kavi/policy/policy.py names the same two): located here without importing the policy
# module, whose imports a `kavi run` would otherwise pay for at its start.
_POLICY_DIR = Path(__file__).resolve().parents[1] / "policy"
DEFAULT_POLICY = _POLICY_DIR / "default_policy.yaml"
CAPABILITY_MAP = _POLICY_DIR / "capability_map.yaml"


class JudgeSettings(Protocol):
    """The settings that can change a verdict; `ForgeSettings` has them (as has `JudgingSettings` below)."""

    @property
    def policy_path(self) -> Path | None: ...
    @property
    def coverage_min(self) -> float: ...
    @property
    def evidence_levels(self) -> tuple[str, ...]: ...
    @property
    def evidence_max_cases(self) -> int: ...
    @property
    def resource_deadline_s(self) -> float: ...
    @property
    def adequacy_max_mutants(self) -> int: ...


@dataclass(frozen=True)
class JudgingSettings:
    policy_path: Path | None = None
    coverage_min: float = 80.0
    evidence_levels: tuple[str, ...] = ("low", "standard", "strict")
    evidence_max_cases: int = 40
    resource_deadline_s: float = RESOURCE_DEADLINE_S
    adequacy_max_mutants: int = ADEQUACY_MAX_MUTANTS

# The gate tools whose versions can change a verdict (ruff and mypy rules, pytest collection, coverage measurement,
# the generated inputs' engine).
TOOLS: tuple[str, ...] = ("ruff", "mypy", "pytest", "coverage", "hypothesis")
# Components listed in this order in messages.
COMPONENTS: tuple[str, ...] = ("python", *TOOLS, "policy", "gates")


@dataclass(frozen=True)
class Fingerprint:
    parts: dict[str, Any]
    digest: str = field(default="")

    @classmethod
    def of(cls, parts: dict[str, Any]) -> "Fingerprint":
        return cls(parts, hashlib.sha256(canonical(parts)).hexdigest())

    def to_dict(self) -> dict[str, Any]:
        return {"digest": self.digest, **self.parts}

    def changes_from(self, earlier: dict[str, Any] | None) -> list[str]:
        """What differs from an earlier fingerprint's parts, one phrase per component (`ruff 0.6.1 → 0.7.0`)."""
        if earlier is None:
            return ["no fingerprint was recorded for the earlier verification"]
        out: list[str] = []
        for key in COMPONENTS:
            old, new = earlier.get(key), self.parts.get(key)
            if old == new:
                continue
            if isinstance(old, str) and isinstance(new, str) and len(old) < 40 and len(new) < 40:
                out.append(f"{key} {old} → {new}")
            else:
                out.append(f"{key} changed")
        return out or ["the fingerprint changed"]


def canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str).encode()


def _dist_version(tool: str) -> str:
    """The installed version of `tool`, read from its `.dist-info` folder's name beside the package (cheaper than
    importing importlib.metadata, which loads zipfile and email)."""
    spec = importlib.util.find_spec(tool)
    if spec is not None and spec.origin:
        found = list(Path(spec.origin).resolve().parent.parent.glob(f"{tool}-*.dist-info"))
        if len(found) == 1:
            return found[0].name[len(tool) + 1:-len(".dist-info")]
    from importlib import metadata

    try:
        return metadata.version(tool)
    except metadata.PackageNotFoundError:
        return "absent"


@lru_cache(maxsize=1)
def _tool_versions() -> tuple[tuple[str, str], ...]:
    return tuple((tool, _dist_version(tool)) for tool in TOOLS)


def judging_policy_path(settings: JudgeSettings, home: KaviHome) -> Path | None:
    """The user's tightening policy the gates apply: the configured file, else `policy.yaml` in the home if present."""
    if settings.policy_path is not None:
        return settings.policy_path
    return home.policy_path if home.policy_path.is_file() else None


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as err:
        return f"unreadable: {err.strerror or err}"


def gate_configuration(settings: JudgeSettings) -> dict[str, Any]:
    """The settings that can change a verdict (not those that only change how long the forge waits)."""
    return {"gates": list(ALL_GATES), "coverage_min": settings.coverage_min,
            "evidence_levels": sorted(settings.evidence_levels), "evidence_max_cases": settings.evidence_max_cases,
            "resource_deadline_s": settings.resource_deadline_s,
            # how many mutants question the evidence (0: none): fewer can leave a question unasked or a
            # counterexample unfound
            "adequacy_max_mutants": settings.adequacy_max_mutants}


_lock = threading.Lock()
_cache: dict[tuple[Any, ...], Fingerprint] = {}


def current_fingerprint(settings: JudgeSettings, home: KaviHome) -> Fingerprint:
    """This process's fingerprint for these settings. Cached per policy file state (path, size, mtime), so editing
    the policy during a long-running process (a sensor) is seen at its next evaluation."""
    user = judging_policy_path(settings, home)
    stat_key: tuple[Any, ...] = ()
    for path in (DEFAULT_POLICY, CAPABILITY_MAP, *(() if user is None else (user,))):
        try:
            st = path.stat()
            stat_key += (str(path), st.st_size, st.st_mtime_ns)
        except OSError:
            stat_key += (str(path), None)
    config = gate_configuration(settings)
    key = (stat_key, canonical(config))
    with _lock:
        found = _cache.get(key)
        if found is not None:
            return found
    policy = hashlib.sha256(canonical({
        "default": _file_digest(DEFAULT_POLICY), "capability_map": _file_digest(CAPABILITY_MAP),
        "user": None if user is None else _file_digest(user)})).hexdigest()
    python = f"{sys.implementation.name} {'.'.join(str(n) for n in sys.version_info[:3])}"
    parts: dict[str, Any] = {"python": python,
                             **dict(_tool_versions()), "policy": policy, "gates": config}
    fp = Fingerprint.of(parts)
    with _lock:
        _cache[key] = fp
    return fp


def judge_settings(settings: KaviSettings | None = None) -> JudgingSettings:
    """The verdict-changing settings as a default-configured gate resource gives them, without importing Dagster or
    the model client: what `kavi run` compares against at its start. None: the variables alone (kavi.settings)."""
    if settings is not None:
        return JudgingSettings(evidence_levels=settings.evidence_levels,
                               evidence_max_cases=settings.evidence_max_cases,
                               resource_deadline_s=settings.resource_deadline_s,
                               adequacy_max_mutants=settings.adequacy_max_mutants)
    return JudgingSettings(evidence_levels=read_setting("evidence_levels"),
                           evidence_max_cases=read_setting("evidence_max_cases"),
                           resource_deadline_s=read_setting("resource_deadline_s"),
                           adequacy_max_mutants=read_setting("adequacy_max_mutants"))
