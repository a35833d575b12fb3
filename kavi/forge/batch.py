"""A batch of attempts forged at once routes on what was known when the batch began.

Routing is Thompson sampling on the outcomes recorded so far. Forged one after another, each attempt sees the
outcomes of those before it; forged N at once, what an attempt would see depends on which runs happened to finish
first, so the same batch could pick other models (and reach other verdicts) from one run to the next. A batch
(`kavi forge --all`, `kavi demo --concurrency N`) therefore stamps its runs with the moment it was submitted (run
tag `kavi/routing_as_of`), and their packets count only the outcomes recorded up to it: the batch learns from the
batches before it, not from itself, and its outcome does not depend on the order its runs finish in.
"""

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from kavi.settings import KaviSettings, read_setting

ROUTING_AS_OF_TAG = "kavi/routing_as_of"
# The model endpoint a run calls: the queue limits how many runs per endpoint run at once.
ENDPOINT_TAG = "kavi/endpoint"
RECORDED_ENDPOINT = "recorded-model"
_MAX_LEN = 64
_FUTURE_SLACK = timedelta(hours=1)


def batch_stamp() -> str:
    return datetime.now(UTC).isoformat()


def routing_as_of(tags: Mapping[str, str]) -> datetime | None:
    """The batch's moment from a run's tags (None for a run outside a batch); a malformed or future value raises
    ValueError naming the tag (a tag can be set by anyone who launches a run)."""
    raw = tags.get(ROUTING_AS_OF_TAG)
    if raw is None:
        return None
    try:
        if len(raw) > _MAX_LEN:
            raise ValueError("too long")
        when = datetime.fromisoformat(raw)
        if when.tzinfo is None:
            raise ValueError("no time zone")
        if when > datetime.now(UTC) + _FUTURE_SLACK:
            raise ValueError("in the future")
    except ValueError as err:
        raise ValueError(f"run tag {ROUTING_AS_OF_TAG}={raw[:_MAX_LEN]!r} must be an ISO time with a zone, not in "
                         f"the future ({err})") from None
    return when


def endpoint_tag(settings: KaviSettings | None = None) -> str:
    """The model endpoint a run calls, as a tag value: `host:port` of KAVI_LLM_BASE_URL (never its path, query or
    credentials), or `recorded-model`. None: the variable alone, read by kavi.settings."""
    base: str = settings.llm_base_url if settings is not None else read_setting("llm_base_url")
    if not base:
        return RECORDED_ENDPOINT
    parts = urlsplit(base)
    host = (parts.hostname or "unknown").lower()
    try:
        port = parts.port
    except ValueError:  # a port out of range: the host alone still names the provider
        port = None
    value = f"{host}:{port}" if port else host
    return "".join(c if c.isalnum() or c in ".-_:" else "_" for c in value)[:63]
