"""What turns text into vectors for search: the `Embedder` protocol, and embeddings from an OpenAI-compatible
`/embeddings` endpoint, parsed strictly (a bad answer is an error, never a vector of whatever came back)."""

import math
from collections.abc import Sequence
from typing import Any, Protocol

MAX_TEXTS = 2048  # per request
MAX_TEXT_CHARS = 8000
MAX_DIMENSIONS = 8192


class EmbeddingError(RuntimeError):
    """The endpoint could not be reached or answered something that is not embeddings."""


class Embedder(Protocol):
    """Queries and passages to vectors. Models trained for it (E5) encode the two sides differently; `model_id`
    names everything the vectors depend on, so stored vectors of another id are never mixed with new ones."""

    model_id: str
    label: str  # what `kavi search` and the README call it

    def queries(self, texts: Sequence[str]) -> list[list[float]]: ...

    def passages(self, texts: Sequence[str]) -> list[list[float]]: ...


class HttpEmbedder:
    """A configured endpoint (KAVI_EMBEDDINGS_URL, KAVI_EMBEDDINGS_MODEL); the prefixes mark a query and a passage
    for models that expect them (E5: `query: ` and `passage: `)."""

    def __init__(self, base_url: str, model: str, *, timeout_s: float = 30.0, api_key: str | None = None,
                 query_prefix: str = "", passage_prefix: str = "") -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.timeout_s = timeout_s
        self.api_key = api_key
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.model_id = f"endpoint|{self.url}|{model}|{query_prefix}|{passage_prefix}"
        self.label = f"{model} at {self.url}"

    def queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self([self.query_prefix + t for t in texts])

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return self([self.passage_prefix + t for t in texts])

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), MAX_TEXTS):
            out.extend(self._batch([t[:MAX_TEXT_CHARS] for t in texts[start:start + MAX_TEXTS]]))
        return out

    def _batch(self, texts: list[str]) -> list[list[float]]:
        import httpx  # only with an embeddings endpoint: search on the packaged model never loads it

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
