"""`kavi serve --http`: streamable HTTP on loopback, driven by the SDK's own HTTP client; a foreign Host header
(DNS rebinding) is turned away."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import anyio
import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from kavi.home import KaviHome
from tests.factories import trust_example


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture()
def http_server(kavi_home: KaviHome) -> Iterator[str]:
    trust_example(kavi_home, "word_count")
    port = _free_port()
    env = {**os.environ, "KAVI_HOME": str(kavi_home.root)}
    proc = subprocess.Popen([sys.executable, "-m", "kavi_assets.cli", "serve", "--http", "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "server exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start listening"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_streamable_http_lists_and_calls(http_server: str, kavi_home: KaviHome) -> None:
    async def scenario() -> tuple[list[str], types.CallToolResult]:
        async with streamable_http_client(http_server) as (read, write, _), \
                ClientSession(read, write, client_info=types.Implementation(name="http-agent", version="3")) as s:
            await s.initialize()
            names = [t.name for t in (await s.list_tools()).tools]
            return names, await s.call_tool("word_count", {"text": "one two"})

    names, result = anyio.run(scenario)
    assert set(names) == {"word_count", "search_skills"}
    assert not result.isError and result.structuredContent == {"words": 2, "lines": 1, "characters": 7}
    assert '"caller":"mcp:http-agent/3"' in kavi_home.executions_log.read_text()


def test_foreign_host_header_is_refused(http_server: str) -> None:
    resp = httpx.post(http_server, headers={"Host": "attacker.example:80", "Content-Type": "application/json",
                                            "Accept": "application/json, text/event-stream"},
                      json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert resp.status_code in (400, 403, 421)
