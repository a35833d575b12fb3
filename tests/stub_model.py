"""A scripted OpenAI-compatible endpoint on 127.0.0.1 (the stub_endpoint fixture), and a forge context that talks to
it (stub_ctx): what the tests of the model's failures script."""

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kavi.forge.build import run_build
from kavi.forge.context import ForgeContext, ForgeSettings
from kavi.forge.intake import intake
from kavi.forge.packet import prepare_packet
from kavi.forge.research import research
from kavi.forge.verify import verify
from kavi.home import KaviHome
from kavi.llm.client import LLMClient, LLMSettings
from tests.factories import WORD_COUNT_SOURCE, WORD_COUNT_TESTS, word_count_proposal

CONFIGURED_KEY = "kavi-test-key-7f3a9c1e5b2d4086"
MODEL = "stub-coder"

Reply = tuple[int, dict[str, str], bytes]
# Reply headers that make the stub misbehave as an endpoint in trouble does (kept out of what it sends).
STALL = "X-Stub-Stall"  # seconds to wait before answering
DROP = "X-Stub-Drop"  # close the connection without an answer
TRUNCATE = "X-Stub-Truncate"  # promise a longer body than is sent, then close


def completion(content: str, model: str = MODEL) -> Reply:
    body = {
        "id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    }
    return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


def files_answer(skill: str = WORD_COUNT_SOURCE, tests: str = WORD_COUNT_TESTS, name: str = "word_count") -> Reply:
    files = [{"path": f"skills/{name}.py", "content": skill}, {"path": f"tests/test_skill_{name}.py", "content": tests}]
    return completion(json.dumps({"files": files, "notes": "stub"}))


def error_reply(status: int, message: str, headers: dict[str, str] | None = None, code: str | None = None) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "server_error", "code": code}}).encode()
    return status, {"Content-Type": "application/json", **(headers or {})}, body


@dataclass
class StubEndpoint:
    """Answers each request with the next scripted reply (the last one repeats); records what it was sent."""

    replies: list[Reply | Callable[[dict[str, str]], Reply]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply | Callable[[dict[str, str]], Reply]) -> None:
        self.replies[:] = list(replies)
        self.requests.clear()
        self.times.clear()

    def next_reply(self, headers: dict[str, str]) -> Reply:
        item = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return item(headers) if callable(item) else item


@pytest.fixture()
def stub_endpoint() -> Iterator[StubEndpoint]:
    stub = StubEndpoint()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            stub.requests.append({"path": self.path, "headers": headers, "body": body})
            stub.times.append(time.monotonic())
            status, extra, payload = stub.next_reply(headers)
            # Faults a real endpoint shows, asked for by X-Stub-* entries of the reply's headers (never sent).
            stall = float(extra.get(STALL, 0))
            if stall:
                time.sleep(stall)
            if DROP in extra:  # the connection closes before any answer
                self.close_connection = True
                return
            self.send_response(status)
            for k, v in extra.items():
                if not k.startswith("X-Stub-"):
                    self.send_header(k, v)
            # A cut-off answer: the length promised is more than is sent before the connection closes.
            cut = TRUNCATE in extra
            self.send_header("Content-Length", str(len(payload) * (3 if cut else 1)))
            self.end_headers()
            try:
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a stall past its timeout)
                self.close_connection = True
                return
            if cut:
                self.close_connection = True

        do_POST = _answer
        do_GET = _answer

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    stub.port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def stub_client(stub: StubEndpoint, key: str = CONFIGURED_KEY, **overrides: Any) -> LLMClient:
    settings: dict[str, Any] = {"base_url": stub.base_url, "api_key": key, "models": (MODEL,), "timeout_s": 10.0}
    settings.update(overrides)
    return LLMClient(LLMSettings(**settings))


# The stub's proposal: word_count with a holdout whose words are unlikely elsewhere (the redaction tests look for them).
STUB_HOLDOUTS = [{"input": {"text": "zebra quokka narwhal"}, "expected": {"words": 3, "lines": 1}}]


def stub_proposal(**changes: Any) -> Any:
    return word_count_proposal(**{"holdout_examples": STUB_HOLDOUTS, **changes})


@pytest.fixture()
def stub_ctx(kavi_home: KaviHome, stub_endpoint: StubEndpoint, monkeypatch: pytest.MonkeyPatch) -> ForgeContext:
    """A forge whose model is the stub endpoint, configured with CONFIGURED_KEY, and the word_count proposal."""
    monkeypatch.setenv("KAVI_LLM_API_KEY", CONFIGURED_KEY)
    ctx = ForgeContext.open(kavi_home, lambda: stub_client(stub_endpoint), ForgeSettings(gate_wall_s=60))
    intake(ctx, stub_proposal(), None)
    return ctx


def attempt(ctx: ForgeContext, name: str = "word_count") -> tuple[Any, Any]:
    prepare_packet(ctx, name, run_id=None)
    run_build(ctx, name, run_id=None)
    out = verify(ctx, name, run_id=None)
    return out, (None if out.passed else research(ctx, name, out))


def closed_port_url() -> str:
    """An endpoint nothing listens on: a loopback port bound and closed again."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def retry_sensor_tick(home: KaviHome, **gates: Any) -> Any:
    """One evaluation of the retry sensor on `home`, with the gate resource's fields `gates` (its backoffs)."""
    import dagster as dg

    from resources.gates import GateRunnerResource
    from resources.home import SkillsHomeResource
    from sensors.retry import retry_failed_attempts

    with dg.DagsterInstance.ephemeral() as instance:
        ctx = dg.build_sensor_context(
            instance=instance, resources={"home": SkillsHomeResource(root=str(home.root)),
                                          "gates": GateRunnerResource(**gates)})
        return retry_failed_attempts(ctx)
