"""A thin client over the `openai` SDK: bounded prompts, enforced timeouts, and errors classified for retries."""

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import openai

from kavi_assets.routing.thompson import config_fingerprint


class LLMErrorKind(StrEnum):
    UNAVAILABLE = "UNAVAILABLE"
    TIMEOUT = "TIMEOUT"
    AUTH = "AUTH"
    MODEL_NOT_FOUND = "MODEL_NOT_FOUND"
    QUOTA = "QUOTA"
    BAD_REQUEST = "BAD_REQUEST"
    PROMPT_TOO_LONG = "PROMPT_TOO_LONG"


TERMINAL_KINDS = frozenset({LLMErrorKind.AUTH, LLMErrorKind.MODEL_NOT_FOUND, LLMErrorKind.QUOTA})


class LLMError(Exception):
    """A model call that failed; `terminal` errors (bad key, missing model, quota) are never retried in a loop."""

    def __init__(self, kind: LLMErrorKind, message: str, model: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.model = model

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


def settings_from_env(environ: Mapping[str, str]) -> LLMSettings | None:
    """The endpoint configured by KAVI_LLM_* variables, or None (then the recorded model is used)."""
    base = environ.get("KAVI_LLM_BASE_URL", "").strip()
    if not base:
        return None
    models = tuple(m.strip() for m in environ.get("KAVI_LLM_MODELS", "").split(",") if m.strip())
    if not models:
        raise LLMError(LLMErrorKind.BAD_REQUEST, "KAVI_LLM_BASE_URL is set but KAVI_LLM_MODELS lists no model")
    return LLMSettings(
        base_url=base,
        api_key=environ.get("KAVI_LLM_API_KEY") or environ.get("OPENAI_API_KEY") or "not-needed",
        models=models,
        timeout_s=float(environ.get("KAVI_LLM_TIMEOUT_S", "60")),
        max_prompt_chars=int(environ.get("KAVI_LLM_MAX_PROMPT_CHARS", "24000")),
        embedding_model=environ.get("KAVI_LLM_EMBED_MODEL", "").strip() or None,
    )


def _classify(err: Exception, model: str) -> LLMError:
    text = str(getattr(err, "message", "") or err)[:500]
    if isinstance(err, openai.APITimeoutError):
        return LLMError(LLMErrorKind.TIMEOUT, f"the model did not answer in time ({text})", model)
    if isinstance(err, openai.APIConnectionError):
        return LLMError(LLMErrorKind.UNAVAILABLE, f"cannot reach the model endpoint: {text}", model)
    if isinstance(err, openai.AuthenticationError | openai.PermissionDeniedError):
        return LLMError(LLMErrorKind.AUTH, f"the endpoint refused the API key: {text}", model)
    if isinstance(err, openai.NotFoundError):
        return LLMError(LLMErrorKind.MODEL_NOT_FOUND, f"model {model!r} not found: {text}", model)
    if isinstance(err, openai.RateLimitError):
        body = getattr(err, "body", None)
        code = body.get("code") if isinstance(body, dict) else None
        if code == "insufficient_quota" or "quota" in text.lower() or "billing" in text.lower():
            return LLMError(LLMErrorKind.QUOTA, f"quota or billing limit reached: {text}", model)
        return LLMError(LLMErrorKind.UNAVAILABLE, f"rate limited: {text}", model)
    if isinstance(err, openai.BadRequestError):
        return LLMError(LLMErrorKind.BAD_REQUEST, f"the endpoint rejected the request: {text}", model)
    if isinstance(err, openai.APIStatusError):
        return LLMError(LLMErrorKind.UNAVAILABLE, f"the endpoint answered {err.status_code}: {text}", model)
    return LLMError(LLMErrorKind.UNAVAILABLE, f"{type(err).__name__}: {text}", model)


_SDK_CLIENTS: dict[tuple[str, str, float], openai.OpenAI] = {}
_SDK_CLIENTS_LOCK = threading.Lock()


def _sdk_client(base_url: str, api_key: str, timeout_s: float) -> openai.OpenAI:
    """One SDK client (and its HTTP connection pool) per endpoint, key and timeout in this process: building one
    loads the TLS trust store, about 25 ms, which every forge step paid when it opened a model client."""
    key = (base_url, api_key, timeout_s)
    with _SDK_CLIENTS_LOCK:
        client = _SDK_CLIENTS.get(key)
        if client is None:
            client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
            _SDK_CLIENTS[key] = client
        return client


class LLMClient:
    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self._client = _sdk_client(settings.base_url, settings.api_key, settings.timeout_s)

    @property
    def endpoint_label(self) -> str:
        if self.settings.recorded:
            return f"recorded model (replay, not a live model) at {self.settings.base_url}"
        return self.settings.base_url

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
        t0 = time.perf_counter()
        try:
            resp = self._client.chat.completions.create(**kwargs)
        except openai.OpenAIError as err:
            raise _classify(err, model) from None
        latency = (time.perf_counter() - t0) * 1000.0
        if not resp.choices:
            raise LLMError(LLMErrorKind.UNAVAILABLE, "the endpoint returned no choices", model)
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
        try:
            resp = self._client.embeddings.create(model=model, input=list(texts),
                                                  timeout=timeout_s or self.settings.timeout_s)
        except openai.OpenAIError as err:
            raise _classify(err, model) from None
        rows = sorted(resp.data, key=lambda d: d.index)
        if len(rows) != len(texts):
            raise LLMError(LLMErrorKind.BAD_REQUEST,
                           f"the endpoint returned {len(rows)} embeddings for {len(texts)} texts", model)
        return [[float(x) for x in row.embedding] for row in rows]

    def list_models(self) -> list[str]:
        try:
            return sorted(m.id for m in self._client.models.list())
        except openai.OpenAIError as err:
            raise _classify(err, "*") from None
