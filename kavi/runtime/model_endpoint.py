"""The model handle: the configured model endpoint offered to skills, with bounded prompts and outputs."""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kavi.skills.base import ModelHandle

if TYPE_CHECKING:
    from kavi.llm.client import LLMClient


class ModelHandleError(RuntimeError):
    """A model call the handle refused (over its bounds) or that the endpoint failed."""


class EndpointModel:
    """The configured model endpoint as a skill handle: bounded prompts and outputs, the client's timeout.

    Only given when the user configured a real endpoint (never the recorded model, which replays builds only).
    Text a skill sends here leaves the machine for that endpoint, which the user chose and trusts.
    """

    def __init__(self, client: "LLMClient", *, max_prompt_chars: int = 16000, max_tokens: int = 1024,
                 max_texts: int = 256) -> None:
        self._client = client
        self._model = client.settings.models[0]
        self._embedding_model = client.settings.embedding_model
        self.max_prompt_chars = max_prompt_chars
        self.max_tokens = max_tokens
        self.max_texts = max_texts

    def can_complete(self) -> bool:
        return True

    def can_embed(self) -> bool:
        return self._embedding_model is not None

    def complete(self, prompt: str, max_tokens: int = 256) -> str:
        from kavi.llm.client import LLMError

        if len(prompt) > self.max_prompt_chars:
            raise ModelHandleError(f"the prompt is {len(prompt)} characters; the handle allows {self.max_prompt_chars}")
        try:
            done = self._client.complete([{"role": "user", "content": prompt}], model=self._model, json_mode=False)
        except LLMError as exc:
            raise ModelHandleError(f"{exc.kind}: {exc}") from None
        return done.text[: 8 * min(max_tokens, self.max_tokens)]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from kavi.llm.client import LLMError

        if self._embedding_model is None:
            raise ModelHandleError("no embedding model is configured (KAVI_LLM_EMBED_MODEL)")
        if len(texts) > self.max_texts:
            raise ModelHandleError(f"{len(texts)} texts to embed; the handle allows {self.max_texts} per call")
        clipped = [t[: self.max_prompt_chars] for t in texts]
        try:
            return self._client.embed(clipped, model=self._embedding_model)
        except LLMError as exc:
            raise ModelHandleError(f"{exc.kind}: {exc}") from None


def model_from_env(environ: Mapping[str, str] | None = None) -> ModelHandle | None:
    """The model handle for a configured endpoint (KAVI_LLM_BASE_URL), or None: skills then fall back."""
    from kavi.llm.client import LLMClient, llm_settings
    from kavi.settings import load_settings

    settings = llm_settings(load_settings(environ))
    return EndpointModel(LLMClient(settings)) if settings is not None else None
