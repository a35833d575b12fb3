"""The KAVI_* settings read from the environment, checked before any run: one line naming the variable and the
form it must take, instead of a step that crashes inside Dagster with a bare ValueError."""

import math
import os
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from kavi.config_base import SUSPECT_POLICIES as SUSPECT_POLICIES
from kavi.config_base import ConfigError as ConfigError
from kavi.config_base import _get
from kavi.config_base import suspect_policy as suspect_policy

DAGSTER_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# The generated-input evidence's bounds per build, unless KAVI_EVIDENCE_MAX_CASES / KAVI_EVIDENCE_BUDGET_S say else.
EVIDENCE_MAX_CASES = 40
EVIDENCE_BUDGET_S = 15.0


def env_float(environ: Mapping[str, str], name: str, default: float, *, minimum: float = 0.0,
              allow_minimum: bool = False, example: str = "") -> float:
    """A finite number above `minimum` (or equal to it, with `allow_minimum`)."""
    raw = _get(environ, name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < minimum or (value == minimum and not allow_minimum):
        bound = f"{'at least' if allow_minimum else 'greater than'} {minimum:g}"
        raise ConfigError(f"{name}={raw!r} must be a number {bound}" + (f" (e.g. {name}={example})" if example else ""))
    return value


def env_int(environ: Mapping[str, str], name: str, default: int, *, minimum: int = 1, example: str = "") -> int:
    raw = _get(environ, name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ConfigError(f"{name}={raw!r} must be a whole number of at least {minimum}"
                          + (f" (e.g. {name}={example})" if example else ""))
    return value


def env_models(environ: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(m.strip() for m in environ.get("KAVI_LLM_MODELS", "").split(",") if m.strip())


def env_base_url(environ: Mapping[str, str]) -> str:
    """KAVI_LLM_BASE_URL, checked: empty (the recorded model) or an http(s) URL with a host."""
    raw = (environ.get("KAVI_LLM_BASE_URL") or "").strip()
    if not raw:
        return ""
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"KAVI_LLM_BASE_URL={raw!r} must be an http:// or https:// URL of an OpenAI-compatible "
                          "endpoint (e.g. KAVI_LLM_BASE_URL=http://localhost:8000/v1), or unset for the recorded model")
    return raw


def _flag(environ: Mapping[str, str], name: str, meaning: str) -> None:
    raw = _get(environ, name)
    if raw is not None and raw not in ("0", "1"):
        raise ConfigError(f"{name}={raw!r} must be 1 ({meaning}) or 0, or unset")


def _models(environ: Mapping[str, str]) -> None:
    if env_base_url(environ) and not env_models(environ):
        raise ConfigError("KAVI_LLM_MODELS must list at least one model, comma-separated, when KAVI_LLM_BASE_URL is "
                          "set (e.g. KAVI_LLM_MODELS=qwen2.5-coder-32b,llama-3.3-70b)")


def _costs(environ: Mapping[str, str]) -> None:
    from resources.gates import parse_costs

    try:
        parse_costs(environ.get("KAVI_LLM_COSTS", ""))
    except ValueError as err:
        raise ConfigError(f"{err} (e.g. KAVI_LLM_COSTS=model-a=0.02,model-b=0.005)") from None


def _auto_approve(environ: Mapping[str, str]) -> None:
    from kavi.skills.base import SideEffectClass

    allowed = [c.value for c in SideEffectClass]
    for entry in (e.strip() for e in environ.get("KAVI_AUTO_APPROVE", "").split(",")):
        if entry and entry.upper() not in allowed:
            raise ConfigError(f"KAVI_AUTO_APPROVE entry {entry!r} must be one of {', '.join(allowed)} "
                              "(comma-separated, e.g. KAVI_AUTO_APPROVE=READ_ONLY)")


def _evidence_levels(environ: Mapping[str, str]) -> None:
    from kavi.forge.ceremony import levels_from_env

    levels_from_env(environ)  # raises ConfigError naming the entry


def _dagster_log(environ: Mapping[str, str]) -> None:
    raw = _get(environ, "KAVI_DAGSTER_LOG")
    if raw is not None and raw.upper() not in DAGSTER_LOG_LEVELS:
        raise ConfigError(f"KAVI_DAGSTER_LOG={raw!r} must be one of {', '.join(DAGSTER_LOG_LEVELS)}")


def _prices(environ: Mapping[str, str]) -> None:
    from kavi.forge.economics import parse_prices

    try:
        parse_prices(environ.get("KAVI_PRICES", ""))
    except ValueError as err:
        raise ConfigError(str(err)) from None


def _ledger_url(environ: Mapping[str, str]) -> None:
    from pathlib import Path

    from kavi.ledger.lake import LakeConfigError, lake_config

    try:
        lake_config(environ, Path(environ.get("KAVI_HOME") or "~/.kavi").expanduser().resolve())
    except LakeConfigError as err:
        raise ConfigError(str(err)) from None

# Issue 13: a fixed replayed latency per recorded answer (not capped like KAVI_RECORDED_SPEED's scaled one), and
# how many forge runs execute at once on this machine (the Dagster queue's limits; see kavi_assets/cli/parallel.py).
RECORDED_LATENCY_ENV = "KAVI_RECORDED_LATENCY_S"
MAX_RECORDED_LATENCY_S = 600.0
MAX_CONCURRENT_RUNS_ENV = "KAVI_MAX_CONCURRENT_RUNS"
ENDPOINT_CONCURRENCY_ENV = "KAVI_ENDPOINT_CONCURRENCY"
MAX_CONCURRENCY = 64


def recorded_latency_s(environ: Mapping[str, str]) -> float | None:
    """KAVI_RECORDED_LATENCY_S: seconds every recorded answer takes (0 to 600), or None to replay the cassettes'."""
    if _get(environ, RECORDED_LATENCY_ENV) is None:
        return None
    value = env_float(environ, RECORDED_LATENCY_ENV, 0.0, allow_minimum=True, example="5")
    if value > MAX_RECORDED_LATENCY_S:
        raise ConfigError(f"{RECORDED_LATENCY_ENV}={value:g} must be at most {MAX_RECORDED_LATENCY_S:g} seconds "
                          f"(e.g. {RECORDED_LATENCY_ENV}=5)")
    return value


def concurrency_setting(environ: Mapping[str, str], name: str, default: int) -> int:
    """A run-concurrency setting: a whole number from 1 to 64 (a bound on the processes one machine starts)."""
    value = env_int(environ, name, default, minimum=1, example="4")
    if value > MAX_CONCURRENCY:
        raise ConfigError(f"{name}={value} must be at most {MAX_CONCURRENCY} (e.g. {name}=4)")
    return value

_CHECKS: tuple[Callable[[Mapping[str, str]], object], ...] = (
    env_base_url,
    _models,
    lambda e: env_float(e, "KAVI_LLM_TIMEOUT_S", 60.0, example="120"),
    lambda e: env_int(e, "KAVI_LLM_MAX_PROMPT_CHARS", 24000, minimum=1, example="24000"),
    lambda e: env_float(e, "KAVI_FORGE_WAIT_S", 600.0, allow_minimum=True, example="600"),
    _costs,
    _auto_approve,
    lambda e: env_float(e, "KAVI_RECORDED_SPEED", 1.0, allow_minimum=True, example="0"),
    lambda e: _flag(e, "KAVI_RESEARCH_ADVICE", "ask the model for advice on research notes"),
    lambda e: _flag(e, "KAVI_WARM_RUNNER", "use the warm gate runner"),
    _dagster_log,
    _evidence_levels,
    lambda e: _gate_slots(e),
    lambda e: env_int(e, "KAVI_EVIDENCE_MAX_CASES", EVIDENCE_MAX_CASES, minimum=0, example="40"),
    lambda e: env_float(e, "KAVI_EVIDENCE_BUDGET_S", EVIDENCE_BUDGET_S, example="15"),
    lambda e: _search(e),  # KAVI_SEARCH_DUPLICATE_SCORE, KAVI_EMBEDDINGS_URL/_MODEL (kavi.search)
    suspect_policy,
    _prices,
    lambda e: env_float(e, "KAVI_SAVING_PER_USE_USD", 0.0, allow_minimum=True, example="0.002"),
    _ledger_url,
    recorded_latency_s,
    lambda e: concurrency_setting(e, MAX_CONCURRENT_RUNS_ENV, 2),
    lambda e: concurrency_setting(e, ENDPOINT_CONCURRENCY_ENV, MAX_CONCURRENCY),
)


def _search(environ: Mapping[str, str]) -> None:
    from kavi.search.index import SearchConfig

    SearchConfig.from_env(environ)


def _gate_slots(environ: Mapping[str, str]) -> None:
    from kavi.sandbox.slots import gate_slots_setting  # it reads its setting with this module's helpers

    gate_slots_setting(environ)


def config_problems(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every problem with the KAVI_* settings, one line each (empty when all is well)."""
    env = os.environ if environ is None else environ
    problems: list[str] = []
    for check in _CHECKS:
        try:
            check(env)
        except ConfigError as err:
            problems.append(str(err))
    return problems


def validate_config(environ: Mapping[str, str] | None = None) -> None:
    """Raise ConfigError (one line, every problem) unless the KAVI_* settings can be used."""
    problems = config_problems(environ)
    if problems:
        raise ConfigError("; ".join(problems))
