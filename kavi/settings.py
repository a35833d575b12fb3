"""The KAVI_* settings: one typed model (pydantic-settings), the only reader of the forge's environment.

Validation is construction: `KaviSettings()` reads the environment (`KaviSettings.from_environ(mapping)` reads a
mapping instead) and raises one ConfigError naming every variable that cannot be used and the form it must take,
instead of a step that crashes inside Dagster with a bare ValueError. The core takes the values: the edges (the
CLI's start, a resource's set-up, a sensor) build the settings and pass them, or the plain values, down.

This module is the bottom of the package: it imports nothing of the forge, and the parsers the validation needs
(costs, prices, evidence levels, the shared ledger's URL, the search settings, the gate slots...) live here.
"""

import functools
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the variable and the expected form (every problem, one
    line, `; `-separated). `problems` lists them one by one."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems if problems is not None else [message]


ENV_PREFIX = "KAVI_"
DEFAULT_HOME = "~/.kavi"
DAGSTER_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# The generated-input evidence's bounds per build, unless KAVI_EVIDENCE_MAX_CASES / KAVI_EVIDENCE_BUDGET_S say else.
EVIDENCE_MAX_CASES = 40
EVIDENCE_BUDGET_S = 15.0
EVIDENCE_LEVELS_ENV = "KAVI_EVIDENCE_LEVELS"
EVIDENCE_LEVEL_NAMES = ("low", "standard", "strict")
SUSPECT_POLICIES = ("refuse", "allow")
# The side-effect classes (kavi.skills.base.SideEffectClass's values) KAVI_AUTO_APPROVE may name.
SIDE_EFFECT_CLASSES = ("READ_ONLY", "FILE_WRITE", "NETWORK", "SECRET_READ")
# A fixed replayed latency per recorded answer (not capped like KAVI_RECORDED_SPEED's scaled one), and
# how many forge runs execute at once on this machine (the Dagster queue's limits; see kavi_assets/cli/parallel.py).
RECORDED_LATENCY_ENV = "KAVI_RECORDED_LATENCY_S"
MAX_RECORDED_LATENCY_S = 600.0
MAX_CONCURRENT_RUNS_ENV = "KAVI_MAX_CONCURRENT_RUNS"
ENDPOINT_CONCURRENCY_ENV = "KAVI_ENDPOINT_CONCURRENCY"
MAX_CONCURRENCY = 64
GATE_SLOTS_ENV = "KAVI_GATE_SLOTS"
MAX_GATE_SLOTS = 256
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


# -- the parsers -----------------------------------------------------------------------------------------------------

def _clean(raw: str | None) -> str | None:
    return None if raw is None or not raw.strip() else raw.strip()


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


def env_float(environ: Mapping[str, str], name: str, default: float, *, minimum: float = 0.0,
              allow_minimum: bool = False, example: str = "") -> float:
    raw = _clean(environ.get(name))
    return default if raw is None else parse_float(name, raw, minimum=minimum, allow_minimum=allow_minimum,
                                                   example=example)


def env_int(environ: Mapping[str, str], name: str, default: int, *, minimum: int = 1, example: str = "") -> int:
    raw = _clean(environ.get(name))
    return default if raw is None else parse_int(name, raw, minimum=minimum, example=example)


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


def env_base_url(environ: Mapping[str, str]) -> str:
    return parse_base_url(environ.get("KAVI_LLM_BASE_URL") or "")


def env_models(environ: Mapping[str, str]) -> tuple[str, ...]:
    return parse_list(environ.get("KAVI_LLM_MODELS", ""))


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


def parse_recorded_latency(raw: str) -> float:
    """KAVI_RECORDED_LATENCY_S: seconds every recorded answer takes (0 to 600)."""
    value = parse_float(RECORDED_LATENCY_ENV, raw, allow_minimum=True, example="5")
    if value > MAX_RECORDED_LATENCY_S:
        raise ConfigError(f"{RECORDED_LATENCY_ENV}={value:g} must be at most {MAX_RECORDED_LATENCY_S:g} seconds "
                          f"(e.g. {RECORDED_LATENCY_ENV}=5)")
    return value


def recorded_latency_s(environ: Mapping[str, str]) -> float | None:
    """KAVI_RECORDED_LATENCY_S from a mapping, or None to replay the cassettes' own latency."""
    raw = _clean(environ.get(RECORDED_LATENCY_ENV))
    return None if raw is None else parse_recorded_latency(raw)


def parse_concurrency(name: str, raw: str) -> int:
    """A run-concurrency setting: a whole number from 1 to 64 (a bound on the processes one machine starts)."""
    value = parse_int(name, raw, minimum=1, example="4")
    if value > MAX_CONCURRENCY:
        raise ConfigError(f"{name}={value} must be at most {MAX_CONCURRENCY} (e.g. {name}=4)")
    return value


def concurrency_setting(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = _clean(environ.get(name))
    return default if raw is None else parse_concurrency(name, raw)


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


# Prices, USD per million tokens (kavi.forge.economics reads them with the home's prices file).
PRICES_ENV = "KAVI_PRICES"
SAVING_ENV = "KAVI_SAVING_PER_USE_USD"
MAX_PRICE = 1_000_000.0  # USD per million tokens: anything above is a typo
MAX_MODEL_NAME = 200
MAX_PRICE_ENTRIES = 500


@dataclass(frozen=True)
class Price:
    prompt_per_m: float
    completion_per_m: float

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float:
        return ((prompt_tokens or 0) * self.prompt_per_m + (completion_tokens or 0) * self.completion_per_m) / 1e6


def price_value(text: Any, where: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value < 0 or value > MAX_PRICE:
        raise ValueError(f"{where}: a price must be a number from 0 to {MAX_PRICE:g} (USD per million tokens)")
    return value


def model_name(name: Any, where: str) -> str:
    text = str(name).strip()
    if not text or len(text) > MAX_MODEL_NAME or any(ord(c) < 32 for c in text):
        raise ValueError(f"{where}: a model name must be 1 to {MAX_MODEL_NAME} printable characters")
    return text


def parse_prices(raw: str) -> dict[str, Price]:
    """KAVI_PRICES: `model=PROMPT/COMPLETION,...` in USD per million tokens (one number: both)."""
    prices: dict[str, Price] = {}
    entries = [e.strip() for e in raw.split(",") if e.strip()]
    if len(entries) > MAX_PRICE_ENTRIES:
        raise ValueError(f"{PRICES_ENV} lists {len(entries)} prices; at most {MAX_PRICE_ENTRIES}")
    for entry in entries:
        model, sep, value = entry.rpartition("=")
        where = f"{PRICES_ENV} entry {entry[:80]!r}"
        if not sep:
            raise ValueError(f"{where} must read model=PROMPT/COMPLETION (USD per million tokens), "
                             f"e.g. {PRICES_ENV}=gpt-4o=2.5/10")
        p, _, c = value.partition("/")
        prompt = price_value(p, where)
        prices[model_name(model, where)] = Price(prompt, price_value(c, where) if c else prompt)
    return prices


def parse_saving(raw: str) -> float:
    value = parse_float(SAVING_ENV, raw, allow_minimum=True, example="0.002")
    try:
        return price_value(value, SAVING_ENV)
    except ValueError as err:
        raise ConfigError(str(err)) from None


# The shared ledger (kavi.ledger.lake connects to it).
LEDGER_URL_ENV = "KAVI_LEDGER_URL"
LEDGER_DATA_ENV = "KAVI_LEDGER_DATA"
LAKE_PREFIX = "ducklake:postgres:"
# libpq key/value pairs the catalog connection may carry. The string ends up inside a SQL literal (ATTACH) and in a
# libpq connection: quotes, backslashes and newlines are refused rather than escaped.
_DSN_KEYS = frozenset({"host", "hostaddr", "port", "user", "dbname", "password", "sslmode", "connect_timeout",
                       "application_name", "target_session_attrs"})
_DSN_VALUE = re.compile(r"^[A-Za-z0-9_.:/@%+,-]{1,200}$")
_MAX_DSN = 1000


class LakeConfigError(ValueError):
    """KAVI_LEDGER_URL or KAVI_LEDGER_DATA cannot be used; the message names the variable and the form."""


@dataclass(frozen=True)
class LakeConfig:
    catalog: dict[str, str]
    data_path: Path

    @property
    def dsn(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.catalog.items())

    @property
    def label(self) -> str:
        """Where the ledger is, for messages: no password."""
        shown = " ".join(f"{k}={v}" for k, v in self.catalog.items() if k != "password")
        return f"ducklake:postgres:{shown} (data {self.data_path})"

    @property
    def lock_key(self) -> int:
        """The advisory lock of this ledger: one per data path, so two ledgers in one database do not share it."""
        import hashlib

        return int(hashlib.sha256(f"kavi-ledger:{self.data_path}".encode()).hexdigest()[:15], 16)


def parse_dsn(raw: str) -> dict[str, str]:
    if len(raw) > _MAX_DSN:
        raise LakeConfigError(f"{LEDGER_URL_ENV} is longer than {_MAX_DSN} characters")
    pairs: dict[str, str] = {}
    for part in raw.split():
        key, sep, value = part.partition("=")
        if not sep or key not in _DSN_KEYS or not _DSN_VALUE.match(value):
            raise LakeConfigError(
                f"{LEDGER_URL_ENV}: {part[:60]!r} is not a libpq key=value pair this forge accepts (keys: "
                f"{', '.join(sorted(_DSN_KEYS))}; values without quotes or spaces), e.g. "
                f"{LEDGER_URL_ENV}='{LAKE_PREFIX}host=127.0.0.1 port=5432 user=kavi dbname=kavi'")
        pairs[key] = value
    if "dbname" not in pairs:
        raise LakeConfigError(f"{LEDGER_URL_ENV} must name the catalog database (dbname=...)")
    return pairs


def parse_lake(url: str, data: str, home_root: Path) -> LakeConfig | None:
    """The shared ledger's settings, or None for the default local ledger file (KAVI_LEDGER_URL unset or empty)."""
    raw = url.strip()
    if not raw:
        return None
    if not raw.startswith(LAKE_PREFIX):
        raise LakeConfigError(f"{LEDGER_URL_ENV}={raw[:80]!r} must start with {LAKE_PREFIX!r} (a DuckLake with its "
                              "catalog in PostgreSQL), or be unset for the local ledger file")
    catalog = parse_dsn(raw[len(LAKE_PREFIX):])
    data_raw = data.strip()
    path = Path(data_raw).expanduser() if data_raw else home_root / "ledger-data"
    if not path.is_absolute():
        raise LakeConfigError(f"{LEDGER_DATA_ENV}={data_raw!r} must be an absolute path (the shared data folder)")
    if "'" in str(path) or "\n" in str(path) or len(str(path)) > 1000:
        raise LakeConfigError(f"{LEDGER_DATA_ENV} must not contain quotes or newlines (at most 1000 characters)")
    return LakeConfig(catalog, path.resolve())


def lake_config(environ: Mapping[str, str], home_root: Path) -> LakeConfig | None:
    """The shared ledger's settings from a mapping of KAVI_LEDGER_URL / KAVI_LEDGER_DATA."""
    return parse_lake(environ.get(LEDGER_URL_ENV) or "", environ.get(LEDGER_DATA_ENV) or "", home_root)


def home_path(raw: str | None) -> Path:
    return Path(raw or DEFAULT_HOME).expanduser().resolve()


# -- the model ---------------------------------------------------------------------------------------------------

# Variables read that do not carry the KAVI_ prefix, by field.
_OTHER_NAMES = {"openai_api_key": "OPENAI_API_KEY", "runtime_dir": "XDG_RUNTIME_DIR"}
_SECRETS_FIELD = "env_secrets"


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
    "search_duplicate_score": _raw(parse_duplicate_score),
    "embeddings_url": _raw(parse_embeddings_url),
    "suspect_policy": _raw(parse_suspect_policy),
    "prices": _raw(parse_prices),
    "saving_per_use_usd": _raw(parse_saving),
    "recorded_latency_s": _raw(parse_recorded_latency),
    "max_concurrent_runs": _raw(lambda r: parse_concurrency(MAX_CONCURRENT_RUNS_ENV, r)),
    "endpoint_concurrency": _raw(lambda r: parse_concurrency(ENDPOINT_CONCURRENCY_ENV, r)),
    "sandbox_off": _raw(lambda r: tuple(sorted(set(parse_list(r))))),
    "decompose_above": lambda n, r: parse_int(n, r, minimum=1, example="8"),
    "decompose_max_depth": lambda n, r: parse_int(n, r, minimum=1, example="2"),
    "decompose_max_nodes": lambda n, r: parse_int(n, r, minimum=3, example="12"),
}

_environ: ContextVar[Mapping[str, str] | None] = ContextVar("kavi_settings_environ", default=None)


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
    warm_runner: bool = True
    sandbox_off: tuple[str, ...] = ()
    dagster_log: str = "CRITICAL"
    evidence_levels: tuple[str, ...] = EVIDENCE_LEVEL_NAMES
    gate_slots: int | None = None  # None: the CPUs this process may use
    evidence_max_cases: int = EVIDENCE_MAX_CASES
    evidence_budget_s: float = EVIDENCE_BUDGET_S
    max_concurrent_runs: int = 2
    endpoint_concurrency: int = MAX_CONCURRENCY
    decompose_above: int = DEFAULT_DECOMPOSE_ABOVE
    decompose_max_depth: int = DEFAULT_DECOMPOSE_MAX_DEPTH
    decompose_max_nodes: int = DEFAULT_DECOMPOSE_MAX_NODES
    # Search.
    search_duplicate_score: float = DEFAULT_DUPLICATE_SCORE
    embeddings_url: str | None = None
    embeddings_model: str | None = None
    # Trust and economics.
    suspect_policy: str = "refuse"
    prices: dict[str, Price] = {}
    saving_per_use_usd: float | None = None  # None: the builder model's price for a typical call
    # The shared ledger (empty: the local ledger file in the home).
    ledger_url: str = ""
    ledger_data: str = ""
    # Not KAVI_*: XDG_RUNTIME_DIR (where the gate slots live) and the values of every secret-named variable.
    runtime_dir: str = ""
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
        problems.extend(_cross_checks(out))
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


def _cross_checks(values: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    if values.get("llm_base_url") and not parse_list(_text(values.get("llm_models"))):
        problems.append("KAVI_LLM_MODELS must list at least one model, comma-separated, when KAVI_LLM_BASE_URL is "
                        "set (e.g. KAVI_LLM_MODELS=qwen2.5-coder-32b,llama-3.3-70b)")
    if values.get("embeddings_url") and not values.get("embeddings_model"):
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
    settings = KaviSettings.from_environ({} if raw is None else {env_name(field): raw})
    return getattr(settings, field)


def configured_variables() -> frozenset[str]:
    """The names of the settings' variables set (not blank) in the process environment now: what a Dagster
    definition binds with dg.EnvVar, so the UI shows it and the run reads it when it starts."""
    names = {env_name(f) for f in KaviSettings.model_fields if f != _SECRETS_FIELD}
    return frozenset(n for n in names if (os.environ.get(n) or "").strip())
