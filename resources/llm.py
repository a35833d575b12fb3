"""The model endpoint as a Dagster resource: a real OpenAI-compatible endpoint, or the recorded model."""

import os
import threading
from pathlib import Path

import dagster as dg
from pydantic import Field

from kavi.llm.client import LLMClient, LLMSettings, settings_from_env
from kavi.llm.recorded import SHARED_URL_ENV, RecordedModelServer, shared_models

_lock = threading.Lock()
_servers: dict[str, RecordedModelServer] = {}


def recorded_server(cassette_dir: Path | None) -> RecordedModelServer:
    """One recorded-model server per process and cassette folder, started on first use."""
    key = str(cassette_dir or "")
    with _lock:
        if key not in _servers:
            _servers[key] = RecordedModelServer(cassette_dir).start()
        return _servers[key]


class LLMResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """`base_url` empty: KAVI_LLM_BASE_URL at run time, else the RECORDED MODEL (replay, not a live model): the
    batch's server when KAVI_RECORDED_BASE_URL names one, else this process's own."""

    base_url: str = Field(default="", description="OpenAI-compatible endpoint; empty = env, else recorded model")
    api_key_env: str = Field(default="KAVI_LLM_API_KEY", description="environment variable holding the key")
    models: list[str] = Field(default_factory=list, description="models to route between")
    timeout_s: float = Field(default=60.0, description="per-call timeout, enforced")
    max_prompt_chars: int = Field(default=24000, description="prompt bound, enforced before sending")
    cassette_dir: str = Field(default="", description="recorded-model cassettes (default: the packaged ones)")

    def get_client(self) -> LLMClient:
        if self.base_url:
            key = os.environ.get(self.api_key_env) or os.environ.get("OPENAI_API_KEY") or "not-needed"
            if not self.models:
                raise ValueError("LLMResource.models must list at least one model when base_url is set")
            return LLMClient(LLMSettings(self.base_url, key, tuple(self.models), self.timeout_s,
                                         self.max_prompt_chars))
        env_settings = settings_from_env(os.environ)
        if env_settings is not None:
            return LLMClient(env_settings)
        shared = (os.environ.get(SHARED_URL_ENV) or "").strip()
        if shared and not self.cassette_dir:  # the batch's one server (kavi_assets/cli/parallel.py), not our own
            base_url, served = shared.rstrip("/"), shared_models(shared)
        else:
            server = recorded_server(Path(self.cassette_dir) if self.cassette_dir else None)
            base_url, served = server.base_url, server.models
        # KAVI_LLM_MODELS may narrow the recorded model's list too (read at run time, not import).
        wanted = [m.strip() for m in os.environ.get("KAVI_LLM_MODELS", "").split(",") if m.strip()]
        models = tuple(self.models) or tuple(wanted) or tuple(served)
        return LLMClient(LLMSettings(base_url, "recorded-model-needs-no-key", models, self.timeout_s,
                                     self.max_prompt_chars, recorded=True))
