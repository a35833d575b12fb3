"""The KAVI_* settings: one typed model (pydantic-settings), the only reader of the forge's environment.

Validation is construction: `KaviSettings()` reads the environment (`KaviSettings.from_environ(mapping)` reads a
mapping instead) and raises one ConfigError naming every variable that cannot be used and the form it must take,
instead of a step that crashes inside Dagster with a bare ValueError. The core takes the values: the edges (the
CLI's start, a resource's set-up, a sensor) build the settings and pass them, or the plain values, down. A child
process gets its environment as a value (`child_environment`); the one writer of this process's is kavi.process_env.

This module and the parsers it validates with (kavi.settings_parsers, kavi.prices, kavi.lake_config) are the bottom
of the package: they import nothing else of the forge.
"""

import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from kavi.lake_config import LakeConfig, LakeConfigError, parse_lake
from kavi.prices import Price, parse_prices, parse_saving
from kavi.settings_parsers import (
    EVIDENCE_LEVEL_NAMES,
    MAX_CONCURRENCY,
    parse_auto_approve,
    parse_base_url,
    parse_concurrency,
    parse_costs,
    parse_dagster_log,
    parse_duplicate_score,
    parse_embeddings_url,
    parse_flag,
    parse_float,
    parse_gate_slots,
    parse_int,
    parse_levels,
    parse_list,
    parse_recorded_latency,
    parse_suspect_policy,
)
from kavi.settings_parsers import ConfigError as ConfigError  # what constructing the settings raises

ENV_PREFIX = "KAVI_"
DEFAULT_HOME = "~/.kavi"
# The generated-input evidence's bounds per build, unless KAVI_EVIDENCE_MAX_CASES / KAVI_EVIDENCE_BUDGET_S say else.
EVIDENCE_MAX_CASES = 40
EVIDENCE_BUDGET_S = 15.0
# The resource gate, unless KAVI_RESOURCE_DEADLINE_S / KAVI_RESOURCE_BUDGET_S say else: the deadline a call at the
# input bound must meet (a trusted skill's default deadline at run time), and the CPU seconds its probes may spend.
RESOURCE_DEADLINE_S = 10.0
RESOURCE_BUDGET_S = 3.0
# The mutation analysis of the evidence, unless KAVI_ADEQUACY_MAX_MUTANTS / _MAX_QUESTIONS / _BUDGET_S say else: the
# mutants tried per attempt (0: off), the questions kept for a person, the sandbox seconds it may spend.
ADEQUACY_MAX_MUTANTS = 80
ADEQUACY_MAX_QUESTIONS = 3
ADEQUACY_BUDGET_S = 1.5
# A fixed replayed latency per recorded answer (not capped like KAVI_RECORDED_SPEED's scaled one), and
# how many forge runs execute at once on this machine (the Dagster queue's limits; see kavi_assets/cli/parallel.py).
RECORDED_LATENCY_ENV = "KAVI_RECORDED_LATENCY_S"
MAX_CONCURRENT_RUNS_ENV = "KAVI_MAX_CONCURRENT_RUNS"
ENDPOINT_CONCURRENCY_ENV = "KAVI_ENDPOINT_CONCURRENCY"
DEFAULT_DUPLICATE_SCORE = 0.8
DEFAULT_DECOMPOSE_ABOVE = 8
DEFAULT_DECOMPOSE_MAX_DEPTH = 2
DEFAULT_DECOMPOSE_MAX_NODES = 12
# Keys: the explicit ones, and other variables whose name says they hold a secret (kavi.redact removes their values).
EXPLICIT_KEY_VARS = ("KAVI_LLM_API_KEY", "OPENAI_API_KEY")
SECRET_NAME = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)($|_)")
PLACEHOLDER_KEYS = frozenset({"", "not-needed", "recorded-model-needs-no-key"})
MIN_CONFIGURED_KEY_CHARS = 4
MIN_ENV_SECRET_CHARS = 8


def _clean(raw: str | None) -> str | None:
    return None if raw is None or not raw.strip() else raw.strip()


def recorded_latency_s(environ: Mapping[str, str]) -> float | None:
    """KAVI_RECORDED_LATENCY_S from a mapping, or None to replay the cassettes' own latency."""
    raw = _clean(environ.get(RECORDED_LATENCY_ENV))
    return None if raw is None else parse_recorded_latency(RECORDED_LATENCY_ENV, raw)


def concurrency_setting(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = _clean(environ.get(name))
    return default if raw is None else parse_concurrency(name, raw)


def home_path(raw: str | None) -> Path:
    return Path(raw or DEFAULT_HOME).expanduser().resolve()


# -- the model ---------------------------------------------------------------------------------------------------

# Variables read that do not carry the KAVI_ prefix, by field.
_OTHER_NAMES = {"openai_api_key": "OPENAI_API_KEY", "runtime_dir": "XDG_RUNTIME_DIR", "dagster_home": "DAGSTER_HOME",
                "columns": "COLUMNS"}
_SECRETS_FIELD = "env_secrets"


def _choice(name: str, raw: str, allowed: tuple[str, ...]) -> str:
    value = raw.strip().lower()
    if value not in allowed:
        raise ValueError(f"{name}: {raw!r} is not one of {', '.join(allowed)}")
    return value


def _raw(parse: Callable[[str], Any]) -> Callable[[str, str], Any]:
    return lambda _name, raw: parse(raw)


# How each field's text becomes its value, in the order the problems are reported. A field not listed is text.
_PARSERS: dict[str, Callable[[str, str], Any]] = {
    "llm_base_url": _raw(parse_base_url),
    "llm_models": _raw(parse_list),
    "llm_timeout_s": lambda n, r: parse_float(n, r, example="120"),
    "llm_max_prompt_chars": lambda n, r: parse_int(n, r, minimum=1, example="24000"),
    "forge_wait_s": lambda n, r: parse_float(n, r, allow_minimum=True, example="600"),
    "llm_costs": _raw(parse_costs),
    "auto_approve": _raw(parse_auto_approve),
    "recorded_speed": lambda n, r: parse_float(n, r, allow_minimum=True, example="0"),
    "research_advice": lambda n, r: parse_flag(n, r, "ask the model for advice on research notes"),
    "warm_runner": lambda n, r: parse_flag(n, r, "use the warm gate runner"),
    "dagster_log": _raw(parse_dagster_log),
    "evidence_levels": _raw(parse_levels),
    "gate_slots": _raw(parse_gate_slots),
    "evidence_max_cases": lambda n, r: parse_int(n, r, minimum=0, example="40"),
    "evidence_budget_s": lambda n, r: parse_float(n, r, example="15"),
    "resource_deadline_s": lambda n, r: parse_float(n, r, example="10"),
    "resource_budget_s": lambda n, r: parse_float(n, r, allow_minimum=True, example="3"),
    "adequacy_max_mutants": lambda n, r: parse_int(n, r, minimum=0, example="40"),
    "adequacy_max_questions": lambda n, r: parse_int(n, r, minimum=0, example="3"),
    "adequacy_budget_s": lambda n, r: parse_float(n, r, example="1.5"),
    "search_duplicate_score": _raw(parse_duplicate_score),
    "embeddings_url": _raw(parse_embeddings_url),
    "search_embedder": _raw(lambda r: _choice("KAVI_SEARCH_EMBEDDER", r, ("packaged", "none"))),
    "search_rerank": lambda n, r: parse_flag(n, r, "let the configured model re-rank `kavi search`'s results and "
                                            "judge a close skill described in other words"),
    "suspect_policy": _raw(parse_suspect_policy),
    "prices": _raw(parse_prices),
    "saving_per_use_usd": _raw(parse_saving),
    "recorded_latency_s": parse_recorded_latency,
    "max_concurrent_runs": parse_concurrency,
    "endpoint_concurrency": parse_concurrency,
    "sandbox_off": _raw(lambda r: tuple(sorted(set(parse_list(r))))),
    "decompose_above": lambda n, r: parse_int(n, r, minimum=1, example="8"),
    "run_timeout_s": lambda n, r: parse_float(n, r, example="10"),
    "run_max_timeout_s": lambda n, r: parse_float(n, r, example="60"),
    "run_private_hosts": _raw(lambda r: tuple(sorted(set(parse_list(r))))),
    "run_workers": lambda n, r: parse_int(n, r, minimum=1, example="4"),
    "disk_reserve_mb": lambda n, r: parse_int(n, r, minimum=0, example="8"),
    "run_without_sandbox": _raw(lambda r: _choice("KAVI_RUN_WITHOUT_SANDBOX", r, ("refuse", "allow"))),
    "decompose_max_depth": lambda n, r: parse_int(n, r, minimum=1, example="2"),
    "decompose_max_nodes": lambda n, r: parse_int(n, r, minimum=3, example="12"),
}

_environ: ContextVar[Mapping[str, str] | None] = ContextVar("kavi_settings_environ", default=None)
# True while one field is read alone (read_setting): checks that relate it to another variable are not made.
_alone: ContextVar[bool] = ContextVar("kavi_settings_alone", default=False)


def env_name(field: str) -> str:
    """The variable a field is read from."""
    return _OTHER_NAMES.get(field, ENV_PREFIX + field.upper())


def _secrets_of(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the configured keys: KAVI_LLM_API_KEY, OPENAI_API_KEY, any *_KEY/*_TOKEN/*_SECRET variable."""
    found: set[str] = set()
    for name, value in environ.items():
        value = value.strip()
        if value in PLACEHOLDER_KEYS:
            continue
        explicit = name in EXPLICIT_KEY_VARS
        if len(value) >= (MIN_CONFIGURED_KEY_CHARS if explicit else MIN_ENV_SECRET_CHARS) and (
                explicit or SECRET_NAME.search(name.upper())):
            found.add(value)
    return tuple(sorted(found))


class _EnvironSource(PydanticBaseSettingsSource):
    """Each field's variable as text, unparsed (the model's validator parses it and names a bad one), from the
    process environment or the mapping `KaviSettings.from_environ` was given."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        environ = self._environ()
        return environ.get(env_name(field_name)), env_name(field_name), False

    @staticmethod
    def _environ() -> Mapping[str, str]:
        given = _environ.get()
        return os.environ if given is None else given

    def __call__(self) -> dict[str, Any]:
        environ = self._environ()
        out: dict[str, Any] = {}
        for name in self.settings_cls.model_fields:
            if name == _SECRETS_FIELD:
                out[name] = _secrets_of(environ)
                continue
            value = environ.get(env_name(name))
            if value is not None:
                out[name] = value
        return out


class KaviSettings(BaseSettings):
    """Every KAVI_* setting the forge reads, typed, with its default. Each field is read from KAVI_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, extra="ignore")

    # Where skills, artifacts, sandboxes, the ledger and the vault live.
    home: str = DEFAULT_HOME
    # The model endpoint; empty: the recorded model.
    llm_base_url: str = ""
    llm_models: tuple[str, ...] = ()
    llm_api_key: str = ""
    openai_api_key: str = ""  # OPENAI_API_KEY, the key when KAVI_LLM_API_KEY is unset
    llm_timeout_s: float = 60.0
    llm_max_prompt_chars: int = 24000
    llm_embed_model: str = ""
    llm_costs: dict[str, float] = {}
    # The recorded model.
    recorded_speed: float = 1.0
    recorded_latency_s: float | None = None
    recorded_cassettes: str = ""
    recorded_base_url: str = ""
    # Forging.
    forge_wait_s: float = 600.0
    auto_approve: tuple[str, ...] = ()
    research_advice: bool = False
    warm_runner: bool = False
    sandbox_off: tuple[str, ...] = ()
    dagster_log: str = "CRITICAL"
    evidence_levels: tuple[str, ...] = EVIDENCE_LEVEL_NAMES
    gate_slots: int | None = None  # None: the CPUs this process may use
    evidence_max_cases: int = EVIDENCE_MAX_CASES
    evidence_budget_s: float = EVIDENCE_BUDGET_S
    resource_deadline_s: float = RESOURCE_DEADLINE_S
    resource_budget_s: float = RESOURCE_BUDGET_S  # 0: the resource gate is omitted, with the reason
    adequacy_max_mutants: int = ADEQUACY_MAX_MUTANTS  # 0: no mutation analysis, with the reason
    adequacy_max_questions: int = ADEQUACY_MAX_QUESTIONS
    adequacy_budget_s: float = ADEQUACY_BUDGET_S
    max_concurrent_runs: int = 2
    endpoint_concurrency: int = MAX_CONCURRENCY
    decompose_above: int = DEFAULT_DECOMPOSE_ABOVE
    decompose_max_depth: int = DEFAULT_DECOMPOSE_MAX_DEPTH
    decompose_max_nodes: int = DEFAULT_DECOMPOSE_MAX_NODES
    # Running trusted skills: each call in a sandboxed worker with a deadline (a proposal's timeout_s, else the
    # default, never above the maximum); the MCP server's pool of warm workers; what to do where no sandbox can be
    # built (refuse, or allow: run with the layers that remain).
    run_timeout_s: float = 10.0
    run_max_timeout_s: float = 60.0
    run_workers: int = 4
    run_without_sandbox: str = "refuse"
    run_private_hosts: tuple[str, ...] = ()  # hosts a person allowed NETWORK skills to reach at private addresses
    # Room set aside in the home, in each of two blocks (MiB; 0: none), given back at the first full-disk error so
    # the attempt or the call's record can still be written (kavi.home.KaviHome.keep_reserve).
    disk_reserve_mb: int = 8
    # Search.
    search_duplicate_score: float = DEFAULT_DUPLICATE_SCORE
    embeddings_url: str | None = None  # a configured endpoint wins over the packaged embedder
    embeddings_model: str | None = None
    embeddings_query_prefix: str = ""  # what a model trained for it expects before a query (E5: "query: ")
    embeddings_passage_prefix: str = ""  # and before a passage (E5: "passage: ")
    search_embedder: str = "packaged"  # none: BM25 alone
    # With a model endpoint configured, it re-ranks `kavi search`'s top candidates and judges whether a close skill
    # that answers a proposal's examples, described in other words, does its task (the duplicate guard).
    search_rerank: bool = True
    # Trust and economics.
    suspect_policy: str = "refuse"
    prices: dict[str, Price] = {}
    saving_per_use_usd: float | None = None  # None: the builder model's price for a typical call
    # The shared ledger (empty: the local ledger file in the home).
    ledger_url: str = ""
    ledger_data: str = ""
    # Where each process writes its ledger lock figures as it exits (empty: nowhere).
    ledger_stats_dir: str = ""
    # Not KAVI_*: XDG_RUNTIME_DIR (where the gate slots live), DAGSTER_HOME, COLUMNS (a console's width, as text:
    # a value that is not a number is ignored) and the values of every secret-named variable.
    runtime_dir: str = ""
    dagster_home: str = ""
    columns: str = ""
    env_secrets: tuple[str, ...] = ()

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as err:
            problems: list[str] = []
            for e in err.errors():
                cause = (e.get("ctx") or {}).get("error")
                if isinstance(cause, ConfigError):
                    problems.extend(cause.problems)
                else:
                    where = ".".join(str(p) for p in e["loc"])
                    problems.append(f"{env_name(where) if where else 'KAVI_*'}: {e['msg']}")
            raise ConfigError("; ".join(problems), problems) from None

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, _EnvironSource(settings_cls)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], **values: Any) -> "KaviSettings":
        """The settings a mapping of variables gives (not the process environment), `values` overriding."""
        with _reading(environ):
            return cls(**values)

    @model_validator(mode="before")
    @classmethod
    def _parse(cls, data: Any) -> Any:
        """Text (from the environment, or given) becomes each field's value; every problem is collected."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        problems: list[str] = []
        for name, value in data.items():
            if not isinstance(value, str) or name == "env_secrets":
                continue
            text = value.strip()
            if not text and name not in ("llm_models",):
                out.pop(name)  # empty or blank: the default
                continue
            parse = _PARSERS.get(name)
            if parse is None:
                out[name] = text
                continue
            try:
                out[name] = parse(env_name(name), text)
            except (ConfigError, LakeConfigError) as err:
                problems.extend(getattr(err, "problems", [str(err)]))
            except ValueError as err:
                problems.append(str(err))
                out.pop(name)
        problems.extend(_cross_checks(out, alone=_alone.get()))
        if problems:
            raise ConfigError("; ".join(problems), problems)
        return out

    # -- derived values ----------------------------------------------------------------------------------------

    @property
    def home_root(self) -> Path:
        return home_path(self.home)

    @property
    def api_key(self) -> str:
        return self.llm_api_key or self.openai_api_key or "not-needed"

    @property
    def lake(self) -> LakeConfig | None:
        """The shared ledger's settings, or None for the local ledger file (checked at construction)."""
        return parse_lake(self.ledger_url, self.ledger_data, self.home_root)

    @property
    def duplicate_score(self) -> float:
        return self.search_duplicate_score

    def env(self) -> dict[str, str]:
        """The settings that differ from their defaults as KAVI_* variables (for a child process's environment)."""
        out: dict[str, str] = {}
        for name in self.model_fields_set:
            if name in _OTHER_NAMES or name == _SECRETS_FIELD:
                continue
            value = getattr(self, name)
            if isinstance(value, tuple):
                text = ",".join(value)
            elif isinstance(value, bool):
                text = "1" if value else "0"
            elif isinstance(value, dict):
                text = ",".join(f"{k}={v.prompt_per_m}/{v.completion_per_m}" if isinstance(v, Price) else f"{k}={v}"
                                for k, v in value.items())
            else:
                text = "" if value is None else str(value)
            out[env_name(name)] = text
        return out


def _cross_checks(values: Mapping[str, Any], *, alone: bool = False) -> list[str]:
    """The checks that need more than one field's value; `alone`: one field is read, the others are not known."""
    problems: list[str] = []
    if not alone and values.get("llm_base_url") and not parse_list(_text(values.get("llm_models"))):
        problems.append("KAVI_LLM_MODELS must list at least one model, comma-separated, when KAVI_LLM_BASE_URL is "
                        "set (e.g. KAVI_LLM_MODELS=qwen2.5-coder-32b,llama-3.3-70b)")
    if not alone and values.get("embeddings_url") and not values.get("embeddings_model"):
        problems.append("KAVI_EMBEDDINGS_MODEL must name the embedding model when KAVI_EMBEDDINGS_URL is set")
    url = _text(values.get("ledger_url"))
    if url.strip():
        try:
            parse_lake(url, _text(values.get("ledger_data")), home_path(_text(values.get("home")) or None))
        except LakeConfigError as err:
            problems.append(str(err))
    return problems


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    return str(value)


@contextmanager
def _reading(environ: Mapping[str, str]) -> Iterator[None]:
    token = _environ.set(environ)
    try:
        yield
    finally:
        _environ.reset(token)


def load_settings(environ: Mapping[str, str] | None = None) -> KaviSettings:
    """The settings of the process environment (or of `environ`); ConfigError names every bad variable."""
    return KaviSettings() if environ is None else KaviSettings.from_environ(environ)


def config_problems(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every problem with the KAVI_* settings, one line each (empty when all is well)."""
    try:
        load_settings(environ)
    except ConfigError as err:
        return list(err.problems)
    return []


def validate_config(environ: Mapping[str, str] | None = None) -> None:
    """Raise ConfigError (one line, every problem) unless the KAVI_* settings can be used."""
    load_settings(environ)


def suspect_policy(settings: KaviSettings | None = None) -> str:
    """KAVI_SUSPECT_POLICY of `settings` (else of the process environment)."""
    return (settings or KaviSettings()).suspect_policy


def read_setting(field: str) -> Any:
    """One field's value from the process environment, validated alone (a bad unrelated variable does not fail it):
    the default of a core function whose caller passed no value."""
    if field == _SECRETS_FIELD:
        return _secrets_of(os.environ)
    return _setting_of(field, os.environ.get(env_name(field)))


@functools.lru_cache(maxsize=256)
def _setting_of(field: str, raw: str | None) -> Any:
    """One field's value from its variable's text: the same text always gives the same value, so a core function on
    a hot path (each query of the trusted versions) does not build a settings model each time; a bad value raises
    again at every call (exceptions are not cached)."""
    return getattr(_defaults() if raw is None else _alone_settings({env_name(field): raw}), field)


@functools.cache
def _defaults() -> KaviSettings:
    """Every field at its default: what a field whose variable is unset reads (one model for all of them)."""
    return _alone_settings({})


def _alone_settings(variables: Mapping[str, str]) -> KaviSettings:
    token = _alone.set(True)
    try:
        return KaviSettings.from_environ(variables)
    finally:
        _alone.reset(token)


def child_environment(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with `overrides`: the `env=` of a child process that inherits the settings."""
    return {**os.environ, **(overrides or {})}


def declared_secret_values(names: Iterable[str]) -> dict[str, str]:
    """The values of the named variables that are set in the process environment: the secrets a skill declared."""
    return {name: os.environ[name] for name in names if name in os.environ}


def configured_variables() -> frozenset[str]:
    """The names of the settings' variables set (not blank) in the process environment now: what a Dagster
    definition binds with dg.EnvVar, so the UI shows it and the run reads it when it starts."""
    names = {env_name(f) for f in KaviSettings.model_fields if f != _SECRETS_FIELD}
    return frozenset(n for n in names if (os.environ.get(n) or "").strip())
