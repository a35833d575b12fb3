"""all-MiniLM-L6-v2 in NumPy: the packaged embedding model's tokenizer and forward pass.

A BERT encoder (6 layers, 12 heads, 384 dimensions) whose mean-pooled, L2-normalized output is a sentence's
vector. The weights (float16) and the vocabulary ship in this package with their licence (kavi.search.packaged
names the folder); nothing is downloaded and no ML framework is needed. `benchmarks/embedder_weights.py` says how
the files were made, and the tests compare vectors with ones the reference implementation computed."""

import unicodedata
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]  # the package has no type information

VOCABULARY_VECTORS = "embeddings.word_embeddings.weight"
LAYERS = 6
HEADS = 12
DIMENSIONS = 384
MAX_TOKENS = 256  # the model's sequence length in training: longer text is cut there
MAX_WORD_CHARS = 100  # a longer "word" is one unknown token
BATCH = 4  # texts encoded together, sorted by length: larger batches only add memory (attention is n² per text)
# A query (one text) is encoded with BLAS on one thread: its products are small, and a second BLAS thread waiting for
# a core that other work holds can make it many times slower than it is alone. Skills being indexed use every core.

Array = npt.NDArray[np.float32]


def _punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:  # ASCII symbols count as punctuation
        return True
    return unicodedata.category(ch).startswith("P")


def _ideograph(cp: int) -> bool:
    """A CJK ideograph: each is a word of its own."""
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F)


class WordPiece:
    """The model's uncased tokenizer: clean the text, lower-case it and drop accents, split on whitespace and
    punctuation, then cut each word into the longest pieces the vocabulary has (`##` marks a piece inside a word)."""

    def __init__(self, vocab_path: Path) -> None:
        words = vocab_path.read_text(encoding="utf-8").split("\n")
        self.ids = {w: i for i, w in enumerate(words) if w}
        self.unknown, self.start, self.end = self.ids["[UNK]"], self.ids["[CLS]"], self.ids["[SEP]"]

    @staticmethod
    def words(text: str) -> list[str]:
        kept = []
        for ch in text:
            cp = ord(ch)
            category = unicodedata.category(ch)
            if ch in "\t\n\r" or category == "Zs":
                kept.append(" ")
            elif cp in (0, 0xFFFD) or category in ("Cc", "Cf"):
                continue
            elif _ideograph(cp):
                kept.append(f" {ch} ")
            else:
                kept.append(ch)
        words: list[str] = []
        for token in "".join(kept).split():
            plain = "".join(c for c in unicodedata.normalize("NFD", token.lower()) if unicodedata.category(c) != "Mn")
            current = ""
            for c in plain:
                if _punctuation(c):
                    words.extend([current, c] if current else [c])
                    current = ""
                else:
                    current += c
            if current:
                words.append(current)
        return words

    def pieces(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self.unknown]
        out: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    out.append(self.ids[piece])
                    break
                end -= 1
            else:
                return [self.unknown]  # no piece of the vocabulary starts here: the whole word is unknown
            start = end
        return out

    def encode(self, text: str) -> list[int]:
        ids = [i for w in self.words(text) for i in self.pieces(w)]
        return [self.start, *ids[:MAX_TOKENS - 2], self.end]


def _erf(x: Array) -> Array:
    """The error function (Abramowitz and Stegun 7.1.26: absolute error under 1.5e-7, below float32's resolution of
    what GELU gives)."""
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return np.sign(x) * (1.0 - poly * np.exp(-a * a))  # type: ignore[no-any-return]


class MiniLM:
    """The encoder: `encode(texts)` gives one unit-length float32 vector of 384 per text."""

    def __init__(self, weights: Path, vocab: Path) -> None:
        with np.load(weights, allow_pickle=False) as stored:
            # The vocabulary's vectors stay in float16 (a text reads a few rows of them); the rest is computed in
            # float32.
            self.vocabulary: npt.NDArray[np.float16] = stored[VOCABULARY_VECTORS]
            self.w: dict[str, Array] = {name: stored[name].astype(np.float32) for name in stored.files
                                        if name != VOCABULARY_VECTORS}
        self.tokenizer = WordPiece(vocab)

    @staticmethod
    def _norm(x: Array, gain: Array, bias: Array) -> Array:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * gain + bias  # type: ignore[no-any-return]

    def _dense(self, x: Array, name: str) -> Array:
        flat = x.reshape(-1, x.shape[-1])
        # The weight on the left: for the few rows of a query, BLAS is faster with this shape.
        out = (self.w[f"{name}.weight"] @ flat.T).T + self.w[f"{name}.bias"]
        return out.reshape(*x.shape[:-1], -1)

    def encode(self, texts: Sequence[str]) -> Array:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        with threadpool_limits(limits=1 if len(texts) == 1 else None, user_api="blas"):
            for at in range(0, len(order), BATCH):
                chunk = order[at:at + BATCH]
                out[chunk] = self._forward([self.tokenizer.encode(texts[i]) for i in chunk])
        return out

    def _forward(self, seqs: list[list[int]]) -> Array:
        w = self.w
        b, n = len(seqs), max(len(s) for s in seqs)
        ids = np.zeros((b, n), dtype=np.int64)
        mask = np.zeros((b, n), dtype=np.float32)
        for i, s in enumerate(seqs):
            ids[i, :len(s)] = s
            mask[i, :len(s)] = 1.0
        x = (self.vocabulary[ids].astype(np.float32) + w["embeddings.position_embeddings.weight"][None, :n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        d = x.shape[-1] // HEADS
        padding = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]  # padded tokens get no attention

        def heads(t: Array) -> Array:
            return t.reshape(b, n, HEADS, d).transpose(0, 2, 1, 3)

        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}"
            q, k, v = (heads(self._dense(x, f"{p}.attention.self.{m}")) for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(d)) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(b, n, -1)
            x = self._norm(self._dense(context, f"{p}.attention.output.dense") + x,
                           w[f"{p}.attention.output.LayerNorm.weight"], w[f"{p}.attention.output.LayerNorm.bias"])
            h = self._dense(x, f"{p}.intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / np.float32(np.sqrt(2.0))))  # GELU
            x = self._norm(self._dense(h, f"{p}.output.dense") + x, w[f"{p}.output.LayerNorm.weight"],
                           w[f"{p}.output.LayerNorm.bias"])
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)  # type: ignore[no-any-return]
