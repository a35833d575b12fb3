"""The ground of the KAVI_* settings: the error a bad value raises, the reading of a raw value, and the settings
the core reads where it uses them (KAVI_SUSPECT_POLICY, at every query of the trusted versions)."""

import os
from collections.abc import Mapping


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the variable and the expected form."""


def _get(environ: Mapping[str, str], name: str) -> str | None:
    raw = environ.get(name)
    return None if raw is None or not raw.strip() else raw.strip()


SUSPECT_POLICIES = ("refuse", "allow")


def suspect_policy(environ: Mapping[str, str] | None = None) -> str:
    """KAVI_SUSPECT_POLICY: what happens to a version whose re-verification failed (SUSPECT). `refuse` (the default):
    it is not served and `kavi run` refuses it with the reason until a person reinstates it; `allow`: it keeps
    running, listed as SUSPECT by `kavi doctor`."""
    raw = _get(os.environ if environ is None else environ, "KAVI_SUSPECT_POLICY")
    if raw is None:
        return "refuse"
    if raw.lower() not in SUSPECT_POLICIES:
        raise ConfigError(f"KAVI_SUSPECT_POLICY={raw!r} must be one of {', '.join(SUSPECT_POLICIES)} (default refuse)")
    return raw.lower()
