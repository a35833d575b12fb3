"""The model handle over the real openai SDK and HTTP: a tiny OpenAI-compatible peer on loopback answers
completions and embeddings, and the shipped summarize_note and search_notes skills use it when it is given,
falling back to their deterministic methods when it is not (or when it fails)."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kavi.home import KaviHome
from kavi.runtime.executor import SkillRunner
from kavi.runtime.model_endpoint import EndpointModel, ModelHandleError, model_from_env
from kavi.runtime.records import ExecutionLog
from kavi.runtime.trust import TrustedSkill
from kavi.skills.base import SideEffectClass
from tests.factories import REPO
from tests.kavi.runtime.runtime_skills import install_source

ANSWERS = REPO / "kavi" / "examples" / "answers"


class _Peer(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    fail = False

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).requests.append({"path": self.path, "body": body})
        if type(self).fail:
            self._send(500, {"error": {"message": "peer is down", "type": "server_error"}})
        elif self.path.endswith("/chat/completions"):
            self._send(200, {
                "id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "The loan needs a signature."}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 6, "total_tokens": 16},
            })
        elif self.path.endswith("/embeddings"):
            # One axis per word of interest: 'soup' and 'loan'.
            data = [{"object": "embedding", "index": i,
                     "embedding": [float(t.lower().count("soup")), float(t.lower().count("loan")), 0.1]}
                    for i, t in enumerate(body["input"])]
            self._send(200, {"object": "list", "data": data, "model": body["model"],
                             "usage": {"prompt_tokens": 1, "total_tokens": 1}})
        else:
            self._send(404, {"error": {"message": "no such route"}})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def peer() -> Iterator[str]:
    _Peer.requests = []
    _Peer.fail = False
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Peer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _env(base_url: str, embed: bool = True) -> dict[str, str]:
    env = {"KAVI_LLM_BASE_URL": base_url, "KAVI_LLM_MODELS": "chat-model", "KAVI_LLM_API_KEY": "k",
           "KAVI_LLM_TIMEOUT_S": "5"}
    if embed:
        env["KAVI_LLM_EMBED_MODEL"] = "embed-model"
    return env


def _runner(tmp_path: Path, model: EndpointModel | None) -> tuple[SkillRunner, KaviHome]:
    home = KaviHome(tmp_path / "home").ensure()
    trusted: dict[str, TrustedSkill] = {}
    for name in ("summarize_note", "search_notes"):
        source = (ANSWERS / name / "1" / "skill.py").read_text()
        trusted[name] = install_source(home, name, source, SideEffectClass.READ_ONLY)
    (home.vault_dir / "notes").mkdir(parents=True, exist_ok=True)
    (home.vault_dir / "notes" / "bank.md").write_text(
        "# Bank\n\nThe loan needs a signature. The bank opens at nine. Bring the loan papers.\n")
    (home.vault_dir / "notes" / "lunch.md").write_text("# Lunch\n\nsoup at the bank cafe\n")
    runner = SkillRunner(home, trusted.get, ExecutionLog(home.executions_log, fsync=False), llm=model)
    return runner, home


def test_no_endpoint_means_no_handle() -> None:
    assert model_from_env({}) is None


def test_summarize_uses_the_model_over_http(peer: str, tmp_path: Path) -> None:
    model = model_from_env(_env(peer))
    assert isinstance(model, EndpointModel) and model.can_complete() and model.can_embed()
    runner, _ = _runner(tmp_path, model)
    rec = runner.run("summarize_note", {"path": "notes/bank.md", "max_sentences": 1}, confirmed=True)
    assert rec.success, rec.error
    assert json.loads(rec.output_json or "{}") == {
        "summary": "The loan needs a signature.", "sentences": 1, "method": "model", "path": "notes/bank.md"}
    chat = [r for r in _Peer.requests if r["path"].endswith("/chat/completions")]
    assert chat and chat[0]["body"]["model"] == "chat-model"
    assert "The loan needs a signature." in chat[0]["body"]["messages"][0]["content"]


def test_search_blends_embeddings(peer: str, tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path, model_from_env(_env(peer)))
    rec = runner.run("search_notes", {"query": "bank loan"}, confirmed=True)
    assert rec.success, rec.error
    out = json.loads(rec.output_json or "{}")
    assert out["method"] == "hybrid" and out["paths"] == ["notes/bank.md", "notes/lunch.md"]
    embeds = [r for r in _Peer.requests if r["path"].endswith("/embeddings")]
    assert embeds and embeds[0]["body"]["model"] == "embed-model" and embeds[0]["body"]["input"][0] == "bank loan"


def test_without_embedding_model_search_stays_lexical(peer: str, tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path, model_from_env(_env(peer, embed=False)))
    out = json.loads(runner.run("search_notes", {"query": "bank loan"}, confirmed=True).output_json or "{}")
    assert out["method"] == "lexical"
    assert not [r for r in _Peer.requests if r["path"].endswith("/embeddings")]


def test_failing_endpoint_falls_back_to_extractive(peer: str, tmp_path: Path) -> None:
    _Peer.fail = True
    runner, _ = _runner(tmp_path, model_from_env(_env(peer)))
    rec = runner.run("summarize_note", {"path": "notes/bank.md", "max_sentences": 1}, confirmed=True)
    assert rec.success, rec.error
    assert json.loads(rec.output_json or "{}")["method"] == "extractive"


def test_handle_bounds(peer: str) -> None:
    model = model_from_env(_env(peer))
    assert isinstance(model, EndpointModel)
    with pytest.raises(ModelHandleError, match="characters"):
        model.complete("x" * (model.max_prompt_chars + 1))
    with pytest.raises(ModelHandleError, match="per call"):
        model.embed(["a"] * (model.max_texts + 1))
    no_embed = model_from_env(_env(peer, embed=False))
    assert isinstance(no_embed, EndpointModel)
    with pytest.raises(ModelHandleError, match="KAVI_LLM_EMBED_MODEL"):
        no_embed.embed(["a"])
