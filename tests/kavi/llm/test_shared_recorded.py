"""One recorded-model server per batch: `kavi forge --all` / `kavi demo --concurrency N` start it before
the daemon and name it to every run worker in KAVI_RECORDED_BASE_URL; a worker then calls it (still labelled the
recorded model) instead of loading every cassette into a server of its own."""

import socket
import time
from pathlib import Path

import pytest

from kavi.llm.recorded import CASSETTES_ENV, SHARED_URL_ENV, RecordedModelServer
from kavi.settings import RECORDED_LATENCY_ENV, ConfigError
from kavi_assets.cli import parallel
from resources import llm as llm_resource
from resources.llm import LLMResource
from tests.kavi.llm.test_recorded_latency import CASSETTE, _ask


@pytest.fixture
def cassettes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "probe.yaml").write_text(CASSETTE)
    monkeypatch.setenv(CASSETTES_ENV, str(tmp_path))
    for var in ("KAVI_LLM_BASE_URL", "KAVI_LLM_MODELS", SHARED_URL_ENV):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def _no_own_server(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(cassette_dir: object) -> object:
        raise AssertionError("a run worker started a recorded-model server of its own")

    monkeypatch.setattr(llm_resource, "recorded_server", refuse)


def test_a_worker_calls_the_batch_server_and_says_it_is_the_recorded_model(
        cassettes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with RecordedModelServer() as server:
        monkeypatch.setenv(SHARED_URL_ENV, server.base_url)
        _no_own_server(monkeypatch)
        client = LLMResource().get_client()
        assert client.settings.recorded and client.settings.base_url == server.base_url
        assert client.settings.models == ("recorded-coder-a",)
        assert client.endpoint_label.startswith("recorded model (replay, not a live model)")
        answer = client.complete([{"role": "user", "content": "hi"}], model="recorded-coder-a",
                                 headers={"X-Kavi-Skill": "latency_probe", "X-Kavi-Kind": "build"})
        assert answer.recorded and "latency_probe" in answer.text


def test_a_resource_bound_to_the_cassette_setting_calls_the_batch_server(
        cassettes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The definitions bind cassette_dir to KAVI_RECORDED_CASSETTES when it is set: the batch's server was started
    # from the same setting, so it serves the same folder (each run loading every cassette again was the bug).
    with RecordedModelServer() as server:
        monkeypatch.setenv(SHARED_URL_ENV, server.base_url)
        _no_own_server(monkeypatch)
        client = LLMResource(cassette_dir=str(cassettes)).get_client()
        assert client.settings.recorded and client.settings.base_url == server.base_url


def test_a_resource_with_its_own_cassettes_keeps_its_own_server(cassettes: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "own"
    own.mkdir()
    (own / "probe.yaml").write_text(CASSETTE)
    monkeypatch.setenv(SHARED_URL_ENV, "http://127.0.0.1:9/v1")  # never asked
    client = LLMResource(cassette_dir=str(own)).get_client()
    assert client.settings.recorded and client.settings.base_url != "http://127.0.0.1:9/v1"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_address_is_checked(cassettes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for bad in ("http://example.com:8000/v1", "https://127.0.0.1:8000/v1", "http://127.0.0.1/v1",
                "http://127.0.0.1:8000/other", "http://user:pw@127.0.0.1:8000/v1", "file:///etc/passwd"):
        monkeypatch.setenv(SHARED_URL_ENV, bad)
        with pytest.raises(ConfigError, match=SHARED_URL_ENV):
            LLMResource().get_client()
    monkeypatch.setenv(SHARED_URL_ENV, f"http://127.0.0.1:{_closed_port()}/v1")
    with pytest.raises(ConfigError, match="does not answer as the recorded model"):
        LLMResource().get_client()


def test_the_batch_starts_one_server_with_the_replayed_latency_and_stops_it(
        cassettes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RECORDED_LATENCY_ENV, "1.0")
    with parallel.shared_recorded_model() as env:
        base = env[SHARED_URL_ENV]
        took: list[float] = []
        _ask(base, took)
        assert took[0] >= 1.0 - 0.05  # KAVI_RECORDED_LATENCY_S applies to the batch's server
        monkeypatch.setenv(SHARED_URL_ENV, base)
        _no_own_server(monkeypatch)
        assert LLMResource().get_client().settings.base_url == base
    time.sleep(0.2)
    with pytest.raises(OSError):
        _ask(base, [])  # stopped with the batch


def test_a_live_endpoint_gets_no_recorded_server(cassettes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("KAVI_LLM_MODELS", "some-model")
    with parallel.shared_recorded_model() as env:
        assert SHARED_URL_ENV not in env and env["KAVI_LLM_BASE_URL"] == "http://127.0.0.1:8000/v1"
