"""A thin client over the `openai` SDK: bounded prompts, enforced timeouts, transient errors retried here (with
backoff honouring Retry-After), the rest classified, and no API key in any message it raises."""

import email.utils
import hashlib
import json
import math
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from kavi.redact import REDACTED, Redactor, remember_key
from kavi.settings import KaviSettings

if TYPE_CHECKING:  # the SDK is imported when a client is built or an error judged, not with this module:
    import openai  # commands and Dagster processes that make no model call do not pay for it

T = TypeVar("T")


class LLMErrorKind(StrEnum):
    UNAVAILABLE = "UNAVAILABLE"
    TIMEOUT = "TIMEOUT"
    AUTH = "AUTH"
    MODEL_NOT_FOUND = "MODEL_NOT_FOUND"
    QUOTA = "QUOTA"
    BAD_REQUEST = "BAD_REQUEST"
    PROMPT_TOO_LONG = "PROMPT_TOO_LONG"
    BAD_RESPONSE = "BAD_RESPONSE"  # the endpoint answered, but not as an OpenAI-compatible server would
    # No endpoint is configured and the recorded model has no recording for this call: a configuration problem
    # (point the forge at a real endpoint), not the model failing, and not worth retrying.
    NOT_CONFIGURED = "NOT_CONFIGURED"


NOT_CONFIGURED_FIX = (
    "no model endpoint is configured, and the recorded model answers only the shipped examples; point the forge at "
    "an OpenAI-compatible endpoint with KAVI_LLM_BASE_URL and KAVI_LLM_MODELS (README: Using a real model)"
)


TERMINAL_KINDS = frozenset({LLMErrorKind.AUTH, LLMErrorKind.MODEL_NOT_FOUND, LLMErrorKind.QUOTA})


# What the endpoint did, not what the model did: after the request-level retries these end an attempt as
# ENDPOINT_UNAVAILABLE (kavi.research.classifier), which costs the model nothing.
ENDPOINT_KINDS = frozenset({LLMErrorKind.UNAVAILABLE, LLMErrorKind.TIMEOUT, LLMErrorKind.BAD_RESPONSE})


class LLMError(Exception):
    """A model call that failed; `terminal` errors (bad key, missing model, quota) are never retried in a loop.
    `status` says in a few words what the endpoint last did ("HTTP 503", "connection refused", "answer cut off")."""

    def __init__(self, kind: LLMErrorKind, message: str, model: str | None = None, status: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.model = model
        self.status = status or str(kind).lower()

    @property
    def terminal(self) -> bool:
        return self.kind in TERMINAL_KINDS


@dataclass(frozen=True)
class LLMSettings:
    base_url: str
    api_key: str
    models: tuple[str, ...]
    timeout_s: float = 60.0
    max_prompt_chars: int = 24000
    max_output_tokens: int = 4096
    temperature: float = 0.0
    recorded: bool = False
    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # USD per 1M prompt/completion tokens
    embedding_model: str | None = None  # only then do skills get embeddings (search_notes ranks with them)
    # Transient answers (429 without a quota code, 408, 5xx) are retried here, not in the SDK (its max_retries is 0):
    # `max_retries` more tries, waiting Retry-After (seconds or an HTTP date) or retry_base_s * 2^n with jitter,
    # each wait at most retry_max_delay_s.
    max_retries: int = 3
    retry_base_s: float = 0.5
    retry_max_delay_s: float = 30.0


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    finish_reason: str
    recorded: bool
    cost_usd: float | None


def llm_settings(settings: KaviSettings) -> LLMSettings | None:
    """The endpoint the KAVI_LLM_* settings configure, or None (then the recorded model is used)."""
    if not settings.llm_base_url:
        return None
    return LLMSettings(
        base_url=settings.llm_base_url,
        api_key=settings.api_key,
        models=settings.llm_models,
        timeout_s=settings.llm_timeout_s,
        max_prompt_chars=settings.llm_max_prompt_chars,
        embedding_model=settings.llm_embed_model or None,
    )


def settings_from_env(environ: Mapping[str, str]) -> LLMSettings | None:
    """The endpoint a mapping of KAVI_LLM_* variables configures, or None; ConfigError names a bad variable."""
    return llm_settings(KaviSettings.from_environ(environ))


_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def retry_after_s(value: str | None, *, now: datetime | None = None, cap_s: float) -> float | None:
    """A Retry-After header as seconds to wait (delta-seconds or an HTTP date), at most `cap_s`; None if absent or
    unreadable."""
    if value is None or not value.strip():
        return None
    raw = value.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, min(cap_s, seconds))


def _is_quota(err: "openai.APIStatusError") -> bool:
    body = getattr(err, "body", None)
    code = body.get("code") if isinstance(body, dict) else None
    text = str(getattr(err, "message", "") or err).lower()
    return code == "insufficient_quota" or "quota" in text or "billing" in text


class _Malformed(Exception):
    """The endpoint answered 200 with something that is not what an OpenAI-compatible server sends (a body that is
    not JSON, an HTML page, a completion without choices): retried like a 5xx, then BAD_RESPONSE."""


def _transient(err: Exception) -> bool:
    """Worth another request now: 408, 429 (not a quota), 5xx, a refused or dropped connection, a cut-off or
    malformed answer. Not a timeout: the call already waited its whole timeout once."""
    import openai

    if isinstance(err, _Malformed | json.JSONDecodeError | UnicodeDecodeError):
        return True
    if isinstance(err, openai.APITimeoutError):
        return False
    if isinstance(err, openai.APIConnectionError):
        return True
    return (isinstance(err, openai.APIStatusError) and err.status_code in _RETRY_STATUSES
            and not (err.status_code == 429 and _is_quota(err)))


def _connection_status(err: "openai.APIConnectionError") -> tuple[str, str]:
    """(a few words, a sentence) for a connection error: refused or unreachable, or dropped mid-answer (the
    endpoint was reached and its answer cut off)."""
    cause = err.__cause__
    name = type(cause).__name__ if cause is not None else ""
    if "without sending a response" in str(cause):
        return "connection dropped", "the endpoint closed the connection without answering"
    if name == "RemoteProtocolError":
        return "answer cut off", "the endpoint's answer was cut off (the connection dropped mid-answer)"
    if name in ("ReadError", "WriteError") or isinstance(cause, ConnectionResetError):
        return "connection dropped", "the connection to the endpoint dropped"
    return "connection refused", "cannot reach the model endpoint"


def _classify(err: Exception, model: str, redactor: Redactor | None = None, tries: int = 1) -> LLMError:
    import openai

    text = str(getattr(err, "message", "") or err)
    # Endpoints may echo the request (its Authorization header included) in an error body: no key goes further.
    text = (redactor or Redactor()).text(text)[:500]
    if tries > 1:
        text = f"{text} (after {tries} tries)"
    if isinstance(err, openai.APITimeoutError):
        return LLMError(LLMErrorKind.TIMEOUT, f"the model did not answer in time ({text})", model, "timeout")
    if isinstance(err, openai.APIConnectionError):
        status, said = _connection_status(err)
        return LLMError(LLMErrorKind.UNAVAILABLE, f"{said}: {text}", model, status)
    if isinstance(err, _Malformed):
        return _bad_response(text, model)
    if isinstance(err, json.JSONDecodeError | UnicodeDecodeError):
        return _bad_response(f"its answer is not valid JSON: {text}", model)
    if isinstance(err, openai.AuthenticationError | openai.PermissionDeniedError):
        return LLMError(LLMErrorKind.AUTH, f"the endpoint refused the API key: {text}", model)
    if isinstance(err, openai.NotFoundError):
        return LLMError(LLMErrorKind.MODEL_NOT_FOUND, f"model {model!r} not found: {text}", model)
    if isinstance(err, openai.RateLimitError):
        if _is_quota(err):
            return LLMError(LLMErrorKind.QUOTA, f"quota or billing limit reached: {text}", model)
        return LLMError(LLMErrorKind.UNAVAILABLE, f"rate limited: {text}", model, "HTTP 429")
    if isinstance(err, openai.BadRequestError):
        return LLMError(LLMErrorKind.BAD_REQUEST, f"the endpoint rejected the request: {text}", model)
    if isinstance(err, openai.APIStatusError):
        return LLMError(LLMErrorKind.UNAVAILABLE, f"the endpoint answered {err.status_code}: {text}", model,
                        f"HTTP {err.status_code}")
    return LLMError(LLMErrorKind.UNAVAILABLE, f"{type(err).__name__}: {text}", model)


def _no_recording(err: "openai.OpenAIError") -> bool:
    body = getattr(err, "body", None)
    return isinstance(body, dict) and body.get("code") == "no_recording"


def _not_configured(err: "openai.OpenAIError", model: str) -> LLMError:
    """The recorded model's "no recording" answer, said as what it is: the server's own words, then the fix."""
    body = getattr(err, "body", None)
    said = str(body.get("message") or "") if isinstance(body, dict) else ""
    return LLMError(LLMErrorKind.NOT_CONFIGURED, f"{said[:300]}: {NOT_CONFIGURED_FIX}" if said else NOT_CONFIGURED_FIX,
                    model)


def _bad_response(what: str, model: str) -> LLMError:
    return LLMError(LLMErrorKind.BAD_RESPONSE,
                    f"the endpoint did not answer as an OpenAI-compatible server ({what}); check KAVI_LLM_BASE_URL "
                    "(it usually ends in /v1) and that the server speaks the OpenAI API", model, "malformed answer")


def _excerpt(value: object) -> str:
    text = " ".join(str(value).split())
    return text[:120] + ("…" if len(text) > 120 else "")


_SDK_CLIENTS: "dict[tuple[str, str, float], openai.OpenAI]" = {}
_SDK_CLIENTS_LOCK = threading.Lock()
_HTTP: "list[openai.DefaultHttpxClient]" = []


def http_client() -> "openai.DefaultHttpxClient":
    """This process's HTTP client for the SDK (its own default client), shared by every SDK client so the TLS trust
    store is loaded once per process; it holds no connection until a request is made."""
    import openai

    with _SDK_CLIENTS_LOCK:
        if not _HTTP:
            _HTTP.append(openai.DefaultHttpxClient())
        return _HTTP[0]


def _sdk_client(base_url: str, api_key: str, timeout_s: float) -> "openai.OpenAI":
    """One SDK client per endpoint, key and timeout in this process, all on one HTTP client (see http_client):
    every forge step that opened a model client paid for a new one."""
    import openai

    key = (base_url, api_key, timeout_s)
    shared = http_client()
    with _SDK_CLIENTS_LOCK:
        client = _SDK_CLIENTS.get(key)
        if client is None:
            client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0,
                                   http_client=shared)
            _SDK_CLIENTS[key] = client
            remember_key(api_key)
        return client


def known_api_keys() -> list[str]:
    """Every API key this process has configured an SDK client with (the redactor removes them from messages)."""
    with _SDK_CLIENTS_LOCK:
        return sorted({key for _, key, _ in _SDK_CLIENTS})


def config_fingerprint(base_url: str, models: Sequence[str], credential: str = "") -> str:
    """What a set-aside model is tied to: the endpoint, the model list and (when given) a digest of the API
    key; without a key the fingerprint is unchanged, so older set-aside records keep matching."""
    parts = [base_url, *sorted(models)]
    if credential:
        parts.append("key:" + hashlib.sha256(credential.encode()).hexdigest())
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


class LLMClient:
    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self._client = _sdk_client(settings.base_url, settings.api_key, settings.timeout_s)
        self._redactor = Redactor(secrets=[settings.api_key])
        self._sleep: Callable[[float], None] = time.sleep
        self.retries_done = 0  # transient answers retried by the last call

    def _call(self, fn: Callable[[], T], model: str) -> T:
        """Call the SDK; retry transient answers with backoff (Retry-After honoured, capped); classify the rest.
        `fn` raises _Malformed for an answer of the wrong shape, which is retried like a 5xx."""
        import openai

        tries = 0
        self.retries_done = 0
        while True:
            tries += 1
            try:
                return fn()
            except (openai.OpenAIError, _Malformed, json.JSONDecodeError, UnicodeDecodeError) as err:
                if isinstance(err, openai.OpenAIError) and self.settings.recorded and _no_recording(err):
                    raise _not_configured(err, model) from None
                if not _transient(err) or tries > self.settings.max_retries:
                    raise _classify(err, model, self._redactor, tries) from None
                headers = getattr(getattr(err, "response", None), "headers", None)
                wait = retry_after_s(headers.get("retry-after") if headers is not None else None,
                                     cap_s=self.settings.retry_max_delay_s)
                if wait is None:
                    backoff = self.settings.retry_base_s * (2 ** (tries - 1))
                    wait = min(self.settings.retry_max_delay_s, backoff * (0.75 + 0.25 * random.random()))
                self.retries_done += 1
                self._sleep(wait)

    @property
    def endpoint_label(self) -> str:
        if self.settings.recorded:
            return f"recorded model (replay, not a live model) at {self.settings.base_url}"
        # The label is stored (packets, builds, Dagster metadata): credentials in the URL stay out of it.
        parts = urlsplit(self.settings.base_url)
        if parts.username is None and parts.password is None:
            return self.settings.base_url
        host = parts.hostname or ""
        netloc = f"{REDACTED}@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))

    @property
    def config_fingerprint(self) -> str:
        return config_fingerprint(self.settings.base_url, self.settings.models, credential=self.settings.api_key)

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        model: str,
        json_mode: bool = True,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> Completion:
        size = sum(len(m.get("content", "")) for m in messages)
        if size > self.settings.max_prompt_chars:
            raise LLMError(LLMErrorKind.PROMPT_TOO_LONG,
                           f"the prompt is {size} characters, over the bound of {self.settings.max_prompt_chars}",
                           model)
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": [dict(m) for m in messages],
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_output_tokens,
            "timeout": timeout_s or self.settings.timeout_s,
        }
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if headers:
            kwargs["extra_headers"] = dict(headers)
        def create() -> Any:
            from openai.types.chat import ChatCompletion

            answer: Any = self._client.chat.completions.create(**kwargs)
            if not isinstance(answer, ChatCompletion):
                raise _Malformed(f"a {type(answer).__name__} instead of a chat completion: "
                                 f"{self._redactor.text(_excerpt(answer))!r}")
            if not isinstance(answer.choices, list) or not answer.choices:
                raise _Malformed("a chat completion without choices")
            if getattr(answer.choices[0], "message", None) is None:
                raise _Malformed("a choice without a message")
            return answer

        t0 = time.perf_counter()
        resp: Any = self._call(create, model)
        latency = (time.perf_counter() - t0) * 1000.0
        choice = resp.choices[0]
        usage = resp.usage
        pt = int(usage.prompt_tokens) if usage else 0
        ct = int(usage.completion_tokens) if usage else 0
        price = self.settings.prices.get(model)
        cost = (pt * price[0] + ct * price[1]) / 1e6 if price else None
        return Completion(
            text=choice.message.content or "",
            model=resp.model or model,
            prompt_tokens=pt,
            completion_tokens=ct,
            latency_ms=latency,
            finish_reason=str(choice.finish_reason or ""),
            recorded=self.settings.recorded,
            cost_usd=cost,
        )

    def embed(self, texts: Sequence[str], *, model: str, timeout_s: float | None = None) -> list[list[float]]:
        """Embeddings of `texts`, in order; the same prompt bound applies to their total size."""
        size = sum(len(t) for t in texts)
        if size > self.settings.max_prompt_chars:
            raise LLMError(LLMErrorKind.PROMPT_TOO_LONG,
                           f"the texts hold {size} characters, over the bound of {self.settings.max_prompt_chars}",
                           model)
        if not texts:
            return []
        def create() -> Any:
            answer: Any = self._client.embeddings.create(model=model, input=list(texts),
                                                         timeout=timeout_s or self.settings.timeout_s)
            if not isinstance(getattr(answer, "data", None), list):
                raise _Malformed(f"no embeddings list: {self._redactor.text(_excerpt(answer))!r}")
            return answer

        resp: Any = self._call(create, model)
        rows = sorted(resp.data, key=lambda d: d.index)
        if len(rows) != len(texts):
            raise LLMError(LLMErrorKind.BAD_REQUEST,
                           f"the endpoint returned {len(rows)} embeddings for {len(texts)} texts", model)
        return [[float(x) for x in row.embedding] for row in rows]

    def list_models(self) -> list[str]:
        return self._call(lambda: sorted(m.id for m in self._client.models.list()), "*")
