"""A batch of attempts forged at once routes on what was known when the batch began.

Routing is Thompson sampling on the outcomes recorded so far. Forged one after another, each attempt sees the
outcomes of those before it; forged N at once, what an attempt would see depends on which runs happened to finish
first, so the same batch could pick other models (and reach other verdicts) from one run to the next. A batch
(`kavi forge --all`, `kavi demo --concurrency N`) therefore stamps its runs with the moment it was submitted (run
tag `kavi/routing_as_of`), and their packets count only the outcomes recorded up to it: the batch learns from the
batches before it, not from itself, and its outcome does not depend on the order its runs finish in.
"""

import json
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
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


# -- batch requests: what `kavi forge --all` asks the queue for, read by the batch sensor (sensors/batch.py)

BATCH_TAG = "kavi/batch"
_BATCH_ID = re.compile(r"^[0-9]{8}T[0-9]{6}-[0-9a-f]{12}$")
MAX_BATCH_ITEMS = 10_000


class BatchRequestError(ValueError):
    """A batch request file that cannot be read as one (named, with the reason)."""


@dataclass(frozen=True)
class BatchItem:
    name: str
    tags: dict[str, str]
    run_key: str | None = None


@dataclass(frozen=True)
class BatchRequest:
    batch_id: str
    items: tuple[BatchItem, ...]

    def run_key(self, item: BatchItem) -> str:
        return item.run_key or f"batch:{self.batch_id}:{item.name}"


def new_batch_id() -> str:
    return f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(6)}"


def write_batch_request(folder: Path, items: Sequence[BatchItem]) -> BatchRequest:
    """Write a batch request into `folder` whole (a reader never sees half of one); returns it."""
    request = BatchRequest(new_batch_id(), tuple(items))
    folder.mkdir(parents=True, exist_ok=True)
    body = {"batch": request.batch_id,
            "items": [{"name": it.name, "tags": dict(it.tags), "run_key": it.run_key} for it in request.items]}
    tmp = folder / f".{request.batch_id}.json.tmp"
    tmp.write_text(json.dumps(body, sort_keys=True), encoding="utf-8")
    os.replace(tmp, folder / f"{request.batch_id}.json")
    return request


def batch_request_path(folder: Path, batch_id: str) -> Path:
    return folder / f"{batch_id}.json"


def _text_map(value: object, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise BatchRequestError(f"{where}: tags must map text to text")
    return dict(value)


def read_batch_request(path: Path) -> BatchRequest:
    """The request in `path`; BatchRequestError naming the file and what is wrong with it."""
    from kavi.proposals.model import NAME_RE

    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise BatchRequestError(f"{path.name}: not a batch request ({err})") from None
    if not isinstance(body, dict) or not isinstance(body.get("items"), list):
        raise BatchRequestError(f"{path.name}: not a batch request (no list of items)")
    batch_id = body.get("batch")
    if not isinstance(batch_id, str) or not _BATCH_ID.fullmatch(batch_id) or path.stem != batch_id:
        raise BatchRequestError(f"{path.name}: its batch id does not name the file")
    if len(body["items"]) > MAX_BATCH_ITEMS:
        raise BatchRequestError(f"{path.name}: more than {MAX_BATCH_ITEMS} items")
    items: list[BatchItem] = []
    for n, raw in enumerate(body["items"], 1):
        where = f"{path.name}, item {n}"
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not NAME_RE.fullmatch(raw["name"]):
            raise BatchRequestError(f"{where}: a proposal name is required")
        run_key = raw.get("run_key")
        if run_key is not None and not isinstance(run_key, str):
            raise BatchRequestError(f"{where}: run_key must be text")
        items.append(BatchItem(raw["name"], _text_map(raw.get("tags", {}), where), run_key or None))
    return BatchRequest(batch_id, tuple(items))
