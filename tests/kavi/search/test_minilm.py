"""The packaged embedding model in NumPy (kavi.search.minilm) against the reference implementation: the same token
ids and the same vectors (computed by sentence-transformers with the float32 weights, stored beside this file) for
text with punctuation, accents, ideographs, an emoji, control and zero-width characters, an over-long word and
more than the model's 256 tokens."""

import json
from pathlib import Path

import numpy as np
import pytest

from kavi.search import packaged
from kavi.search.minilm import MiniLM

REFERENCE = json.loads((Path(__file__).with_name("minilm_reference.json")).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM(packaged.MODEL_DIR / packaged.WEIGHTS_FILE, packaged.MODEL_DIR / packaged.VOCAB_FILE)


def test_the_tokens_are_the_reference_tokenizers(model: MiniLM) -> None:
    for case in REFERENCE["cases"]:
        assert model.tokenizer.encode(case["text"]) == case["ids"], case["text"][:60]
    assert len(REFERENCE["cases"][-1]["ids"]) == 256  # cut at the model's length


def test_the_vectors_are_the_reference_implementations(model: MiniLM) -> None:
    texts = [c["text"] for c in REFERENCE["cases"]]
    wanted = np.array([c["vector"] for c in REFERENCE["cases"]], dtype=np.float32)
    together = model.encode(texts)
    alone = np.stack([model.encode([t])[0] for t in texts])
    for got in (together, alone):  # padding in a batch changes nothing
        assert got.shape == (len(texts), 384) and got.dtype == np.float32
        assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
        cosines = (got * wanted).sum(axis=1)
        assert cosines.min() > 0.9999, cosines  # float16 weights: within rounding of the float32 model
    # Meaning, not spelling: a paraphrase is nearer than another task.
    a, b, c = model.encode(["Count the words in a text.", "How many words does this string have?",
                            "Convert a time span like 2h15m into seconds."])
    assert float(a @ b) > float(a @ c) + 0.2
    assert model.encode([]).shape == (0, 384)


def test_missing_files_are_said_and_search_falls_back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert packaged.unavailable() is None
    (tmp_path / "vocab.txt").write_text("[UNK]\n", encoding="utf-8")
    monkeypatch.setattr(packaged, "MODEL_DIR", tmp_path)
    assert packaged.unavailable() == "the packaged embedding model's weights.npz is missing from this install"


def test_a_query_keeps_blas_on_one_thread(model: MiniLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """A query's small products on one BLAS thread (a second one waiting for a busy core slows it many times);
    skills being indexed keep BLAS as it is."""
    import kavi.search.minilm as minilm

    asked: list[object] = []
    real = minilm.threadpool_limits

    def recording(*, limits: object, user_api: str) -> object:
        asked.append((limits, user_api))
        return real(limits=limits, user_api=user_api)

    monkeypatch.setattr(minilm, "threadpool_limits", recording)
    model.encode(["count the words of a text"])
    model.encode(["count the words of a text", "convert 2h into seconds"])
    assert asked == [(1, "blas"), (None, "blas")]
