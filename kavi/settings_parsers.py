"""The parsers of the settings' text: each turns one variable's value into a typed value, or raises ConfigError naming
the variable and the form it must take."""

import math
import re
from urllib.parse import urlsplit


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the variable and the expected form (every problem, one
    line, `; `-separated). `problems` lists them one by one."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems if problems is not None else [message]


DAGSTER_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
EVIDENCE_LEVELS_ENV = "KAVI_EVIDENCE_LEVELS"
EVIDENCE_LEVEL_NAMES = ("low", "standard", "strict")
SUSPECT_POLICIES = ("refuse", "allow")
# The side-effect classes (kavi.skills.base.SideEffectClass's values) KAVI_AUTO_APPROVE may name.
SIDE_EFFECT_CLASSES = ("READ_ONLY", "FILE_WRITE", "NETWORK", "SECRET_READ")
MAX_RECORDED_LATENCY_S = 600.0
MAX_CONCURRENCY = 64
GATE_SLOTS_ENV = "KAVI_GATE_SLOTS"
MAX_GATE_SLOTS = 256


def parse_float(name: str, raw: str, *, minimum: float = 0.0, allow_minimum: bool = False,
                example: str = "") -> float:
    """A finite number above `minimum` (or equal to it, with `allow_minimum`)."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < minimum or (value == minimum and not allow_minimum):
        bound = f"{'at least' if allow_minimum else 'greater than'} {minimum:g}"
        raise ConfigError(f"{name}={raw!r} must be a number {bound}" + (f" (e.g. {name}={example})" if example else ""))
    return value


def parse_int(name: str, raw: str, *, minimum: int = 1, example: str = "") -> int:
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ConfigError(f"{name}={raw!r} must be a whole number of at least {minimum}"
                          + (f" (e.g. {name}={example})" if example else ""))
    return value


def parse_list(raw: str) -> tuple[str, ...]:
    return tuple(m.strip() for m in raw.split(",") if m.strip())


def parse_base_url(raw: str) -> str:
    """KAVI_LLM_BASE_URL, checked: empty (the recorded model) or an http(s) URL with a host."""
    raw = raw.strip()
    if not raw:
        return ""
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"KAVI_LLM_BASE_URL={raw!r} must be an http:// or https:// URL of an OpenAI-compatible "
                          "endpoint (e.g. KAVI_LLM_BASE_URL=http://localhost:8000/v1), or unset for the recorded model")
    return raw


def parse_flag(name: str, raw: str, meaning: str) -> bool:
    if raw not in ("0", "1"):
        raise ConfigError(f"{name}={raw!r} must be 1 ({meaning}) or 0, or unset")
    return raw == "1"


def parse_costs(raw: str) -> dict[str, float]:
    """KAVI_LLM_COSTS: `model=cost,model=cost` into a mapping; a malformed entry is an error that names it."""
    costs: dict[str, float] = {}
    for entry in (e.strip() for e in raw.split(",")):
        if not entry:
            continue
        model, sep, value = entry.rpartition("=")
        try:
            cost = float(value)
        except ValueError:
            cost = -1.0
        if not sep or not model.strip() or cost < 0:
            raise ConfigError(f"KAVI_LLM_COSTS entry {entry!r} must read model=cost with a cost of 0 or more "
                              "(e.g. KAVI_LLM_COSTS=model-a=0.02,model-b=0.005)")
        costs[model.strip()] = cost
    return costs


def parse_auto_approve(raw: str) -> tuple[str, ...]:
    out: list[str] = []
    for entry in (e.strip() for e in raw.split(",")):
        if not entry:
            continue
        if entry.upper() not in SIDE_EFFECT_CLASSES:
            raise ConfigError(f"KAVI_AUTO_APPROVE entry {entry!r} must be one of {', '.join(SIDE_EFFECT_CLASSES)} "
                              "(comma-separated, e.g. KAVI_AUTO_APPROVE=READ_ONLY)")
        out.append(entry.upper())
    return tuple(out)


def parse_levels(raw: str | None) -> tuple[str, ...]:
    """KAVI_EVIDENCE_LEVELS: comma-separated levels (low, standard, strict), `all`, or `none`; unset or empty is the
    default (every level). An unknown entry is a ConfigError naming it."""
    text = (raw or "").strip().lower()
    if not text or text == "all":
        return EVIDENCE_LEVEL_NAMES
    if text == "none":
        return ()
    levels: list[str] = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        if entry not in EVIDENCE_LEVEL_NAMES:
            raise ConfigError(f"{EVIDENCE_LEVELS_ENV} entry {entry!r} must be one of low, standard, strict (or the "
                              f"whole value all or none), e.g. {EVIDENCE_LEVELS_ENV}=standard,strict")
        if entry not in levels:
            levels.append(entry)
    return tuple(levels)


def parse_dagster_log(raw: str) -> str:
    if raw.upper() not in DAGSTER_LOG_LEVELS:
        raise ConfigError(f"KAVI_DAGSTER_LOG={raw!r} must be one of {', '.join(DAGSTER_LOG_LEVELS)}")
    return raw.upper()


def parse_suspect_policy(raw: str) -> str:
    """KAVI_SUSPECT_POLICY: what happens to a version whose re-verification failed (SUSPECT). `refuse` (the default):
    it is not served and `kavi run` refuses it with the reason until a person reinstates it; `allow`: it keeps
    running, listed as SUSPECT by `kavi doctor`."""
    if raw.lower() not in SUSPECT_POLICIES:
        raise ConfigError(f"KAVI_SUSPECT_POLICY={raw!r} must be one of {', '.join(SUSPECT_POLICIES)} (default refuse)")
    return raw.lower()


def parse_recorded_latency(name: str, raw: str) -> float:
    """KAVI_RECORDED_LATENCY_S (`name`): seconds every recorded answer takes (0 to 600)."""
    value = parse_float(name, raw, allow_minimum=True, example="5")
    if value > MAX_RECORDED_LATENCY_S:
        raise ConfigError(f"{name}={value:g} must be at most {MAX_RECORDED_LATENCY_S:g} seconds "
                          f"(e.g. {name}=5)")
    return value



def parse_concurrency(name: str, raw: str) -> int:
    """A run-concurrency setting: a whole number from 1 to 64 (a bound on the processes one machine starts)."""
    value = parse_int(name, raw, minimum=1, example="4")
    if value > MAX_CONCURRENCY:
        raise ConfigError(f"{name}={value} must be at most {MAX_CONCURRENCY} (e.g. {name}=4)")
    return value



def parse_gate_slots(raw: str) -> int:
    """KAVI_GATE_SLOTS: a whole number from 0 (no limit) to 256."""
    value = parse_int(GATE_SLOTS_ENV, raw, minimum=0, example="2")
    if value > MAX_GATE_SLOTS:
        raise ConfigError(f"{GATE_SLOTS_ENV}={value} must be at most {MAX_GATE_SLOTS}, or 0 for no limit "
                          f"(e.g. {GATE_SLOTS_ENV}=2)")
    return value


def parse_duplicate_score(raw: str) -> float:
    score = parse_float("KAVI_SEARCH_DUPLICATE_SCORE", raw, example="0.8")
    if score > 1.0:
        raise ConfigError(f"KAVI_SEARCH_DUPLICATE_SCORE={score} must be between 0 and 1 (1.0: as close as the "
                          "skill's own text; e.g. KAVI_SEARCH_DUPLICATE_SCORE=0.8)")
    return score


def parse_embeddings_url(raw: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", raw):
        raise ConfigError(f"KAVI_EMBEDDINGS_URL={raw!r} must be an http:// or https:// URL of an "
                          "OpenAI-compatible endpoint (e.g. KAVI_EMBEDDINGS_URL=http://localhost:8000/v1)")
    return raw
