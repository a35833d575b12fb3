"""The default embedder: all-MiniLM-L6-v2, in process, from the weights this package carries (kavi.search.minilm:
NumPy only, no download, no network, no ML framework). It was trained for similarity between texts of one kind,
so a skill and a query are encoded alike (no prefixes).

`unavailable()` says why it cannot run (its files missing from a damaged install); then search ranks by BM25 alone
and `kavi doctor` and `kavi search` say so."""

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kavi.search.embeddings import EmbeddingError

if TYPE_CHECKING:
    from kavi.search.minilm import MiniLM

MODEL_DIR = Path(__file__).with_name("models") / "all-minilm-l6-v2"  # its weights, vocabulary and licence
WEIGHTS_FILE, VOCAB_FILE = "weights.npz", "vocab.txt"  # in MODEL_DIR
MODEL_FILES = (WEIGHTS_FILE, VOCAB_FILE)
PACKAGE = "kavi"
MODEL = "all-MiniLM-L6-v2"
ENCODING = "symmetric"  # skills and queries alike (see the module's note)
WEIGHTS_FORMAT = "f16"  # part of the vectors' key: vectors of other weights are never reused
_lock = threading.Lock()
_model: "MiniLM | None" = None
# Vectors already computed in this process, by text; at most MEMO_MAX (about 15 MB).
MEMO_MAX = 10_000
_seen: dict[str, list[float]] = {}


def unavailable() -> str | None:
    """Why the packaged embedder cannot run here (None: it can)."""
    missing = [name for name in MODEL_FILES if not (MODEL_DIR / name).is_file()]
    if missing:
        return f"the packaged embedding model's {' and '.join(missing)} is missing from this install"
    return None


def _shared_model() -> "MiniLM":
    """The process's one loaded model (its weights are read once per process); call with _lock held."""
    global _model
    if _model is None:
        from kavi.search.minilm import MiniLM

        _model = MiniLM(MODEL_DIR / WEIGHTS_FILE, MODEL_DIR / VOCAB_FILE)
    return _model


class PackagedEmbedder:
    """all-MiniLM-L6-v2 in NumPy: 384 dimensions, L2-normalized."""

    label = f"{MODEL} (packaged, in process)"

    def __init__(self) -> None:
        self.model_id = f"{PACKAGE}|{MODEL}|{WEIGHTS_FORMAT}|{ENCODING}"

    def queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts)

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts)  # symmetric (see the module's note)

    @staticmethod
    def _encode(texts: Sequence[str]) -> list[list[float]]:
        """Vectors of `texts`, each text encoded once per process (a server, a test worker or a demo searches
        many homes holding the same skills)."""
        if not texts:
            return []
        with _lock:  # one model, one caller at a time (the MCP server answers from several threads)
            missing = list(dict.fromkeys(t for t in texts if t not in _seen))
            if missing:
                try:
                    out = _shared_model().encode(missing).tolist()
                except Exception as err:  # a damaged install: said in one line, never a traceback
                    raise EmbeddingError(f"the packaged embedding model ({MODEL}) could not run: "
                                         f"{type(err).__name__}: {err}; reinstall kavi-forge, or set "
                                         "KAVI_SEARCH_EMBEDDER=none") from None
                if len(_seen) + len(missing) > MEMO_MAX:
                    _seen.clear()
                _seen.update(zip(missing, out, strict=True))
            return [_seen[t] for t in texts]
