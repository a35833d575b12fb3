"""The shared ledger's location (KAVI_LEDGER_URL, KAVI_LEDGER_DATA), checked; kavi.ledger.lake connects to it."""

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

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
