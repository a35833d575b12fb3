"""Embeddings from an OpenAI-compatible `/embeddings` endpoint, parsed strictly (a bad answer is an error, never
a vector of whatever came back)."""

import math
from collections.abc import Sequence
from typing import Any

import httpx

MAX_TEXTS = 2048  # per request
MAX_TEXT_CHARS = 8000
MAX_DIMENSIONS = 8192


class EmbeddingError(RuntimeError):
    """The endpoint could not be reached or answered something that is not embeddings."""


class HttpEmbedder:
    def __init__(self, base_url: str, model: str, *, timeout_s: float = 30.0, api_key: str | None = None) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.timeout_s = timeout_s
        self.api_key = api_key

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), MAX_TEXTS):
            out.extend(self._batch([t[:MAX_TEXT_CHARS] for t in texts[start:start + MAX_TEXTS]]))
        return out

    def _batch(self, texts: list[str]) -> list[list[float]]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            resp = httpx.post(self.url, json={"model": self.model, "input": texts}, headers=headers,
                              timeout=self.timeout_s)
        except httpx.HTTPError as err:
            raise EmbeddingError(f"the embedding endpoint {self.url} could not be reached: {err}") from None
        if resp.status_code != 200:
            raise EmbeddingError(f"the embedding endpoint {self.url} answered HTTP {resp.status_code}")
        try:
            body: Any = resp.json()
        except ValueError:
            raise EmbeddingError(f"the embedding endpoint {self.url} did not answer JSON") from None
        return parse_embeddings(body, len(texts))


def parse_embeddings(body: Any, expected: int) -> list[list[float]]:
    """`{"data": [{"index": i, "embedding": [floats]}]}` with one finite vector per text, all of one size."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list) or len(data) != expected:
        raise EmbeddingError(f"the embedding answer must hold {expected} vectors under 'data'")
    vectors: list[list[float] | None] = [None] * expected
    for i, item in enumerate(data):
        emb = item.get("embedding") if isinstance(item, dict) else None
        index = item.get("index", i) if isinstance(item, dict) else i
        if not isinstance(index, int) or not 0 <= index < expected or vectors[index] is not None:
            raise EmbeddingError("the embedding answer has a missing, repeated or out-of-range index")
        if (not isinstance(emb, list) or not 0 < len(emb) <= MAX_DIMENSIONS
                or not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in emb)):
            raise EmbeddingError(f"vector {index} of the embedding answer is not a list of finite numbers")
        vectors[index] = [float(x) for x in emb]
    dims = {len(v) for v in vectors if v is not None}
    if len(dims) != 1:
        raise EmbeddingError("the embedding answer's vectors differ in size")
    return [v for v in vectors if v is not None]
