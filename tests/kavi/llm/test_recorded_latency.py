"""The recorded model replays a fixed latency per answer, not capped at 2 s, and serves
concurrent requests concurrently (a slow answer does not hold up the others)."""

import json
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from kavi.llm.recorded import RecordedModelServer
from kavi.settings import RECORDED_LATENCY_ENV as LATENCY_ENV
from kavi.settings import ConfigError, validate_config
from kavi.settings import recorded_latency_s as fixed_latency_s

CASSETTE = """\
skill: latency_probe
models: [recorded-coder-a]
interactions:
  - kind: build
    latency_ms: 10
    files: {"skills/latency_probe.py": "x = 1\\n"}
"""


def _ask(base: str, out: list[float]) -> None:
    body = json.dumps({"model": "recorded-coder-a", "messages": [{"role": "user", "content": "hi"}]}).encode()
    req = urllib.request.Request(f"{base}/chat/completions", data=body, method="POST",
                                 headers={"content-type": "application/json", "x-kavi-skill": "latency_probe"})
    t0 = time.monotonic()
    with urllib.request.urlopen(req, timeout=60) as resp:
        doc = json.loads(resp.read())
    assert doc["system_fingerprint"] == "kavi-recorded-replay"
    out.append(time.monotonic() - t0)


def test_fixed_latency_is_validated() -> None:
    assert fixed_latency_s({}) is None
    assert fixed_latency_s({LATENCY_ENV: "5"}) == 5.0
    assert fixed_latency_s({LATENCY_ENV: "0"}) == 0.0
    for bad in ("-1", "nan", "fast", "601"):
        with pytest.raises(ConfigError, match=LATENCY_ENV):
            fixed_latency_s({LATENCY_ENV: bad})
        with pytest.raises(ConfigError, match=LATENCY_ENV):
            validate_config({LATENCY_ENV: bad})


def test_parallel_requests_overlap_with_uncapped_latency(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "probe.yaml").write_text(CASSETTE)
    latency = 2.5  # above the old 2 s cap, which KAVI_RECORDED_SPEED still honours
    monkeypatch.setenv(LATENCY_ENV, str(latency))
    with RecordedModelServer(tmp_path) as server:
        took: list[float] = []
        threads = [threading.Thread(target=_ask, args=(server.base_url, took)) for _ in range(8)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        wall = time.monotonic() - t0
    assert len(took) == 8
    assert min(took) >= latency - 0.05  # not capped
    assert wall < 2 * latency, f"8 requests took {wall:.1f}s: served one after another"


def test_cassette_folder_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kavi.llm.recorded import CASSETTES_ENV, CassetteError, default_cassette_dir

    packaged = default_cassette_dir()
    monkeypatch.setenv(CASSETTES_ENV, str(tmp_path))
    assert default_cassette_dir() == tmp_path.resolve()
    monkeypatch.setenv(CASSETTES_ENV, str(tmp_path / "missing"))
    with pytest.raises(CassetteError, match=CASSETTES_ENV):
        default_cassette_dir()
    monkeypatch.delenv(CASSETTES_ENV)
    assert default_cassette_dir() == packaged
