"""THE RECORDED MODEL: an OpenAI-compatible server on loopback that replays completions from cassette files.

It is a stand-in for a live model, so the whole forge runs offline (quick start, tests, CI). It says so in
its banner, in `/v1/models` (`owned_by`), and in every completion's `system_fingerprint`.
"""

import argparse
import asyncio
import json
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kavi.proposals.yaml_bounds import SAFE_LOADER
from kavi.settings import KaviSettings, read_setting

LABEL = "kavi-recorded-model (replay, not a live model)"
FINGERPRINT = "kavi-recorded-replay"
MAX_LATENCY_S = 2.0


class CassetteError(ValueError):
    """A cassette file that cannot be used; the message names the file."""


class RecordedError(BaseModel):
    model_config = ConfigDict(extra="forbid")
    status: int
    type: str = "invalid_request_error"
    code: str | None = None
    message: str


class Interaction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str = "build"
    attempt: int | str = "*"
    model: str = "*"
    latency_ms: float = 0.0
    usage: dict[str, int] = Field(default_factory=dict)
    files: dict[str, str] | None = None
    notes: str = ""
    raw: str | None = None
    error: RecordedError | None = None

    @model_validator(mode="after")
    def _one_answer(self) -> "Interaction":
        given = [x for x in (self.files, self.raw, self.error) if x is not None]
        if len(given) != 1:
            raise ValueError("an interaction needs exactly one of: files, raw, error")
        if isinstance(self.attempt, str) and self.attempt != "*":
            raise ValueError("attempt is an integer or '*'")
        return self

    def content(self) -> str:
        if self.raw is not None:
            return self.raw
        files = [{"path": p, "content": c} for p, c in (self.files or {}).items()]
        return json.dumps({"files": files, "notes": self.notes})


class Cassette(BaseModel):
    model_config = ConfigDict(extra="forbid")
    skill: str
    models: list[str] = Field(default_factory=list)
    interactions: list[Interaction]


class CassetteIndex:
    def __init__(self, cassettes: Sequence[Cassette]) -> None:
        self.by_skill: dict[str, list[Interaction]] = {}
        models: list[str] = []
        for c in cassettes:
            self.by_skill.setdefault(c.skill, []).extend(c.interactions)
            models += c.models
        self.models = sorted(set(models))

    def match(self, skill: str, kind: str, attempt: int, model: str) -> Interaction | None:
        best: tuple[int, Interaction] | None = None
        for it in self.by_skill.get(skill, []):
            if it.kind != kind:
                continue
            if it.model not in ("*", model) or (it.attempt != "*" and it.attempt != attempt):
                continue
            score = (2 if it.model == model else 0) + (1 if it.attempt == attempt else 0)
            if best is None or score > best[0]:
                best = (score, it)
        return best[1] if best else None


CASSETTES_ENV = "KAVI_RECORDED_CASSETTES"


def default_cassette_dir(configured: str | None = None) -> Path:
    """The packaged cassettes, or the folder KAVI_RECORDED_CASSETTES names (it reaches every run worker a daemon
    starts, which a resource argument given in one process does not); `configured` is its value (None: the variable
    alone, through kavi.settings)."""
    raw = (read_setting("recorded_cassettes") if configured is None else configured).strip()
    if raw:
        folder = Path(raw).expanduser()
        if not folder.is_dir():
            raise CassetteError(f"{CASSETTES_ENV}={raw!r} is not a folder of cassettes")
        return folder.resolve()
    return Path(__file__).resolve().parent / "cassettes"


def load_cassettes(directory: Path) -> CassetteIndex:
    cassettes: list[Cassette] = []
    for path in sorted(directory.glob("*.yaml")):
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
            cassettes.append(Cassette.model_validate(data))
        except yaml.YAMLError as err:
            raise CassetteError(f"{path.name}: not valid YAML: {err}") from None
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise CassetteError(f"{path.name}: {loc}: {first['msg']}") from None
    return CassetteIndex(cassettes)


def _error(status: int, message: str, type_: str, code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": type_, "code": code}}, status_code=status)


def build_app(cassette_dir: Path, settings: KaviSettings | None = None) -> Starlette:
    index = load_cassettes(cassette_dir)
    speed = settings.recorded_speed if settings is not None else float(read_setting("recorded_speed"))
    # A fixed latency per answer (KAVI_RECORDED_LATENCY_S) stands for a real model's seconds per answer and is not
    # capped; otherwise the cassette's recorded latency, scaled by KAVI_RECORDED_SPEED, at most MAX_LATENCY_S.
    fixed: float | None = settings.recorded_latency_s if settings is not None else read_setting("recorded_latency_s")

    async def completions(request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return _error(400, "the request body is not JSON", "invalid_request_error")
        model = str(body.get("model", ""))
        skill = request.headers.get("x-kavi-skill", "")
        kind = request.headers.get("x-kavi-kind", "build")
        try:
            attempt = int(request.headers.get("x-kavi-attempt", "1"))
        except ValueError:
            attempt = 1
        if model not in index.models:
            return _error(404, f"The model `{model}` does not exist (the recorded model serves: "
                          f"{', '.join(index.models)})", "invalid_request_error", "model_not_found")
        it = index.match(skill, kind, attempt, model)
        if it is None:
            return _error(503, f"the recorded model has no completion for skill {skill or '?'} attempt {attempt} "
                          f"(kind {kind}, model {model})", "server_error", "no_recording")
        # Waiting yields the event loop (asyncio.sleep, not time.sleep): concurrent requests wait side by side,
        # as they would on a real endpoint, instead of one after another.
        if fixed is not None:
            if fixed > 0:
                await asyncio.sleep(fixed)
        elif it.latency_ms and speed > 0:
            await asyncio.sleep(min(MAX_LATENCY_S, it.latency_ms / 1000.0 * speed))
        if it.error is not None:
            return _error(it.error.status, it.error.message, it.error.type, it.error.code)
        content = it.content()
        pt = it.usage.get("prompt_tokens", sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4)
        ct = it.usage.get("completion_tokens", len(content) // 4)
        return JSONResponse({
            "id": f"chatcmpl-recorded-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": FINGERPRINT,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
        })

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [
            {"id": m, "object": "model", "created": 0, "owned_by": LABEL} for m in index.models]})

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "label": LABEL, "models": index.models})

    return Starlette(routes=[
        Route("/v1/chat/completions", completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RecordedModelServer:
    """Runs the recorded model in a daemon thread on 127.0.0.1 until stopped."""

    def __init__(self, cassette_dir: Path | None = None, port: int = 0, settings: KaviSettings | None = None) -> None:
        import uvicorn

        self.cassette_dir = cassette_dir or default_cassette_dir(
            settings.recorded_cassettes if settings is not None else None)
        self.index = load_cassettes(self.cassette_dir)
        self.port = port or _free_port()
        config = uvicorn.Config(build_app(self.cassette_dir, settings), host="127.0.0.1", port=self.port,
                                log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="kavi-recorded-model", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def models(self) -> list[str]:
        return list(self.index.models)

    def start(self) -> "RecordedModelServer":
        import urllib.request

        self._thread.start()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1).read()
                return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"the recorded model did not start on 127.0.0.1:{self.port}")

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(5)

    def __enter__(self) -> "RecordedModelServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# -- one recorded model for a batch of run workers ---------------------------------------------------------------
# `kavi forge --all` / `kavi demo --concurrency N` start one server before the daemon and name it to every run
# worker in this variable, instead of each worker loading every cassette into its own server. It is not
# KAVI_LLM_BASE_URL: that names a live endpoint, and what a worker calls must still say it is the recorded model.
SHARED_URL_ENV = "KAVI_RECORDED_BASE_URL"
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_MAX_MODELS = 64
_shared_lock = threading.Lock()
_shared: dict[str, list[str]] = {}


def shared_models(base_url: str, timeout_s: float = 5.0) -> list[str]:
    """The models of the recorded-model server at `base_url` (SHARED_URL_ENV), checked: a loopback http URL ending
    in /v1 whose /health says it is the recorded model. Asked once per process and address. ConfigError otherwise."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlsplit

    from kavi.settings_parsers import ConfigError

    parts = urlsplit(base_url.strip())
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or parts.hostname not in _LOOPBACK or port is None or parts.path.rstrip("/") != "/v1" \
            or parts.query or parts.fragment or parts.username or parts.password:
        raise ConfigError(f"{SHARED_URL_ENV}={base_url[:200]!r} must be a loopback address of the recorded model "
                          "(http://127.0.0.1:PORT/v1, as kavi sets it for a batch's run workers), or unset")
    url = f"http://{parts.netloc}/v1"
    with _shared_lock:
        if url in _shared:
            return list(_shared[url])
    try:
        with urllib.request.urlopen(f"http://{parts.netloc}/health", timeout=timeout_s) as resp:
            doc = json.loads(resp.read(65536))
    except (OSError, ValueError) as err:
        raise ConfigError(f"{SHARED_URL_ENV}={url} does not answer as the recorded model ({err}); unset it to start "
                          "one in this process") from None
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("label") != LABEL or not isinstance(models, list) or not models \
            or len(models) > _MAX_MODELS or not all(isinstance(m, str) and 0 < len(m) <= 200 for m in models):
        raise ConfigError(f"{SHARED_URL_ENV}={url} is not the recorded model (its /health does not say so)")
    with _shared_lock:
        _shared[url] = list(models)
    return list(models)


def main(argv: Sequence[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description="Serve the recorded model (replayed cassettes, not a live model).")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--cassettes", type=Path, default=default_cassette_dir())
    args = parser.parse_args(argv)
    index = load_cassettes(args.cassettes)
    print(f"RECORDED MODEL (replay of {len(index.by_skill)} cassettes, not a live model) at "
          f"http://127.0.0.1:{args.port}/v1 serving {', '.join(index.models)}")
    uvicorn.run(build_app(args.cassettes), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
