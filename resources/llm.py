"""The model endpoint as a Dagster resource: a real OpenAI-compatible endpoint, or the recorded model."""

import threading
from pathlib import Path

import dagster as dg
from pydantic import Field

from kavi.llm.client import LLMClient, LLMSettings
from kavi.llm.recorded import RecordedModelServer, shared_models
from kavi.settings import KaviSettings

_lock = threading.Lock()
_servers: dict[str, RecordedModelServer] = {}


def recorded_server(cassette_dir: Path | None, settings: KaviSettings | None = None) -> RecordedModelServer:
    """One recorded-model server per process and cassette folder, started on first use."""
    key = str(cassette_dir or "")
    with _lock:
        if key not in _servers:
            _servers[key] = RecordedModelServer(cassette_dir, settings=settings).start()
        return _servers[key]


class LLMResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """A field left unset takes the KAVI_LLM_* setting when the client is made (a run's start), so a daemon's run
    workers follow the environment they get. No endpoint (`base_url` and KAVI_LLM_BASE_URL empty): the RECORDED
    MODEL (replay, not a live model): the batch's server when KAVI_RECORDED_BASE_URL names one, else this process's
    own."""

    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint; unset: KAVI_LLM_BASE_URL, "
                                                           "empty: the recorded model")
    api_key: str | None = Field(default=None, description="the endpoint's key; unset: KAVI_LLM_API_KEY, else "
                                                          "OPENAI_API_KEY")
    models: list[str] | None = Field(default=None, description="models to route between; unset: KAVI_LLM_MODELS")
    timeout_s: float | None = Field(default=None, gt=0, description="per-call timeout, enforced; unset: "
                                                                    "KAVI_LLM_TIMEOUT_S, else 60")
    max_prompt_chars: int | None = Field(default=None, ge=1, description="prompt bound, enforced before sending; "
                                                                         "unset: KAVI_LLM_MAX_PROMPT_CHARS, else 24000")
    cassette_dir: str | None = Field(default=None, description="recorded-model cassettes; unset: "
                                                               "KAVI_RECORDED_CASSETTES, else the packaged ones")

    @classmethod
    def from_settings(cls, settings: KaviSettings) -> "LLMResource":
        """The resource with the settings' values as its configuration (shown in the Dagster UI; not the key)."""
        return cls(base_url=settings.llm_base_url or None, models=list(settings.llm_models) or None,
                   timeout_s=settings.llm_timeout_s, max_prompt_chars=settings.llm_max_prompt_chars,
                   cassette_dir=settings.recorded_cassettes or None)

    def get_client(self, settings: KaviSettings | None = None) -> LLMClient:
        s = settings if settings is not None else KaviSettings()  # read when a run starts, not at import
        timeout_s = self.timeout_s if self.timeout_s is not None else s.llm_timeout_s
        max_prompt_chars = self.max_prompt_chars if self.max_prompt_chars is not None else s.llm_max_prompt_chars
        base_url = s.llm_base_url if self.base_url is None else self.base_url
        if base_url:
            models = tuple(self.models if self.models is not None else s.llm_models)
            if not models:
                raise ValueError("LLMResource.models must list at least one model when base_url is set")
            key = self.api_key or s.api_key
            return LLMClient(LLMSettings(base_url, key, models, timeout_s, max_prompt_chars,
                                         embedding_model=s.llm_embed_model or None))
        shared = s.recorded_base_url.strip()
        # The batch's one server (kavi_assets/cli/parallel.py) serves the folder the setting names: a resource left
        # unset or bound to that same setting uses it; one configured with another folder starts its own.
        if shared and (not self.cassette_dir or self.cassette_dir == s.recorded_cassettes):
            base, served = shared.rstrip("/"), shared_models(shared)
        else:
            cassettes = self.cassette_dir or s.recorded_cassettes
            server = recorded_server(Path(cassettes) if cassettes else None, s)
            base, served = server.base_url, server.models
        # KAVI_LLM_MODELS may narrow the recorded model's list too (read at run time, not import).
        models = tuple(self.models or ()) or s.llm_models or tuple(served)
        return LLMClient(LLMSettings(base, "recorded-model-needs-no-key", models, timeout_s, max_prompt_chars,
                                     recorded=True))
