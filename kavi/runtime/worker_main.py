"""The contained worker: one trusted skill call, run inside the sandbox, touching the world only through the broker.

Started by `kavi.runtime.worker` in the gate sandbox (no network, no host filesystem beyond a private tmp, memory
and process limits). It imports what skills need, says it is ready, then reads one request from the forge:

- `run`: execute exactly the given bytes (hash-checked by the forge) as the skill's module, validate the input,
  call `execute` with a context whose handles are proxies, validate the output, and answer `done`;
- `describe`: load each given skill and answer its class name, description and schemas.

Every effect a handle proxy asks for is a `call` message the forge performs or refuses; it never trusts what this
process says beyond the skill's own output. The protocol is one JSON object per line on the descriptors that were
stdin and stdout at start; fd 0 is then /dev/null and fd 1 the worker's stderr, so a skill's prints cannot reach it.
"""

import base64
import importlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO

MAX_LINE = 64 * 1024 * 1024


class _Channel:
    def __init__(self, reader: BinaryIO, writer: BinaryIO) -> None:
        self._reader = reader
        self._writer = writer

    def send(self, message: Mapping[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=True, separators=(",", ":"), default=str).encode() + b"\n"
        self._writer.write(line)
        self._writer.flush()

    def receive(self) -> dict[str, Any]:
        line = self._reader.readline(MAX_LINE)
        if not line.endswith(b"\n"):
            raise SystemExit(3)  # the forge went away (or spoke past the bound): nothing more to do
        message = json.loads(line)
        if not isinstance(message, dict):
            raise SystemExit(3)
        return message


def _remote_error(kind: str, message: str) -> BaseException:
    """The exception a handle raises in-process, rebuilt from the forge's answer (its type by name)."""
    from kavi.runtime import errors_by_name

    cls = errors_by_name.ERRORS.get(kind, RuntimeError)
    return cls(message)


class _Broker:
    """The proxies' way out: one `call` message, one answer."""

    def __init__(self, channel: _Channel) -> None:
        self._channel = channel

    def call(self, handle: str, method: str, *args: Any) -> Any:
        self._channel.send({"call": f"{handle}.{method}", "args": list(args)})
        answer = self._channel.receive()
        if "raise" in answer:
            kind, message = answer["raise"]
            raise _remote_error(str(kind), str(message))
        return answer.get("ok")


class _Vault:
    def __init__(self, broker: _Broker) -> None:
        self._b = broker

    def read_text(self, path: str) -> str:
        return str(self._b.call("vault", "read_text", path))

    def exists(self, path: str) -> bool:
        return bool(self._b.call("vault", "exists", path))

    def list_files(self, pattern: str = "**/*") -> list[str]:
        return [str(p) for p in self._b.call("vault", "list_files", pattern)]

    def write_text(self, path: str, content: str, *, overwrite: bool = True) -> str:
        return str(self._b.call("vault", "write_text", path, content, bool(overwrite)))


class _Http:
    def __init__(self, broker: _Broker) -> None:
        self._b = broker

    def get_json(self, url: str, params: Mapping[str, str] | None = None) -> Any:
        return self._b.call("http", "get_json", url, dict(params) if params is not None else None)

    def get_text(self, url: str, params: Mapping[str, str] | None = None) -> str:
        return str(self._b.call("http", "get_text", url, dict(params) if params is not None else None))


class _Secrets:
    def __init__(self, broker: _Broker) -> None:
        self._b = broker

    def get(self, name: str) -> str:
        return str(self._b.call("secrets", "get", name))


class _Model:
    def __init__(self, broker: _Broker, *, complete: bool, embed: bool) -> None:
        self._b = broker
        self._complete = complete
        self._embed = embed

    def can_complete(self) -> bool:
        return self._complete

    def can_embed(self) -> bool:
        return self._embed

    def complete(self, prompt: str, max_tokens: int = 256) -> str:
        return str(self._b.call("llm", "complete", prompt, int(max_tokens)))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._b.call("llm", "embed", list(texts))]


def _load(request: Mapping[str, Any]) -> Any:
    """The skill's class from exactly the given bytes; raises with the message the runtime records."""
    from kavi.runtime.trust import TrustedSkill, find_skill_class
    from kavi.skills.base import SideEffectClass
    from kavi.skills.loading import exec_skill_module
    from kavi.skills.source import SourceEncodingError

    name = str(request["name"])
    data = base64.b64decode(str(request["source"]))
    digest = str(request["digest"])
    try:
        module = exec_skill_module(name, data, digest)
    except SourceEncodingError as exc:
        raise _Failed("load", f"SkillLoadError: trusted skill {name!r} is refused: {exc}") from None
    except (SyntaxError, ValueError) as exc:
        raise _Failed("load", f"SkillLoadError: trusted skill {name!r} does not compile: {exc}") from None
    except (Exception, SystemExit) as exc:
        raise _Failed("load", f"SkillLoadError: trusted skill {name!r} failed while loading: "
                      f"{type(exc).__name__}: {exc}") from None
    from kavi.runtime.errors import TrustError

    skill = TrustedSkill(name=name, path=request.get("shown", name), sha256=digest,
                         side_effect_class=SideEffectClass(str(request["side_effect_class"])))
    try:
        return find_skill_class(module, skill)
    except TrustError as exc:
        kind = "tampered" if type(exc) is TrustError else "load"
        raise _Failed(kind, f"{type(exc).__name__}: {exc}") from None


class _Failed(Exception):
    def __init__(self, kind: str, error: str) -> None:
        super().__init__(error)
        self.kind = kind
        self.error = error


def _run(request: Mapping[str, Any], broker: _Broker) -> dict[str, Any]:
    from pydantic import BaseModel, ValidationError

    from kavi.runtime.skill_io import describe_validation_error, output_json
    from kavi.skills.base import SkillContext

    cls = _load(request)
    name = str(request["name"])
    try:
        parsed = cls.input_model.model_validate(request.get("input") or {}, extra="forbid")
    except ValidationError as exc:
        return {"kind": "schema", "error": f"InputValidationError: input does not match the schema of {name!r}: "
                f"{describe_validation_error(exc)}"}
    grants = request.get("handles") or {}
    context = SkillContext(
        vault=_Vault(broker) if grants.get("vault") else None,
        http=_Http(broker) if grants.get("http") else None,
        secrets=_Secrets(broker) if grants.get("secrets") else None,
        llm=_Model(broker, complete=bool(grants.get("complete")), embed=bool(grants.get("embed")))
        if grants.get("llm") else None,
    )
    try:
        result = cls(context).execute(parsed)
    except (Exception, SystemExit) as exc:
        return {"kind": "failure", "error": f"{type(exc).__name__}: {exc}"}
    try:
        raw = result.model_dump() if isinstance(result, BaseModel) else result
        out = cls.output_model.model_validate(raw)
        text = output_json(out)
    except ValidationError as exc:
        return {"kind": "failure", "error": f"OutputValidationError: output of {name!r} does not match its schema: "
                f"{describe_validation_error(exc)}"}
    except Exception as exc:
        return {"kind": "failure", "error": f"OutputValidationError: {type(exc).__name__}: {exc}"}
    return {"output": text}


def _describe(request: Mapping[str, Any]) -> dict[str, Any]:
    from kavi.runtime.skill_io import input_schema_of

    described: list[dict[str, Any]] = []
    for item in request.get("skills") or []:
        try:
            cls = _load(item)
        except _Failed as exc:
            described.append({"error": exc.error, "kind": exc.kind})
            continue
        described.append({"class": cls.__name__, "description": str(getattr(cls, "description", "")),
                          "input_schema": input_schema_of(cls), "output_schema": cls.output_model.model_json_schema()})
    return {"skills": described}


# Where loading (the trust checks) and answering (validation, output) a call start; they import the rest.
_CALL_MODULES = ("kavi.runtime.trust", "kavi.runtime.skill_io")


def _warm_pydantic() -> None:
    """Build, validate and dump one model now: pydantic's first model costs tens of milliseconds of set-up, paid here
    while the worker waits, not by the call's skill."""
    from pydantic import BaseModel

    class _Warm(BaseModel):
        text: str = ""
        count: int = 0
        items: list[str] = []
        ratio: float | None = None
        flags: dict[str, bool] = {}

    _Warm.model_validate({"text": "a", "count": 1, "items": ["b"]}).model_dump_json()
    _Warm.model_json_schema()


def main() -> int:
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    channel = _Channel(proto_in, proto_out)
    # What every skill imports, loaded before the forge hands over a call.
    import pydantic  # noqa: F401

    from kavi.skills.loading import CONTRACT_MODULE

    # The contract as forged skills import it (a path in the layer above, loaded by name as the skills load it).
    importlib.import_module(CONTRACT_MODULE)
    # What loading, validating and answering a call imports, loaded now too: paid while the worker waits, not by
    # the call (the trust checks alone import the forge's vocabulary).
    for module in _CALL_MODULES:
        importlib.import_module(module)

    _warm_pydantic()
    channel.send({"ready": os.getpid()})
    request = channel.receive()
    op = request.get("op")
    try:
        if op == "run":
            done = _run(request, _Broker(channel))
        elif op == "describe":
            done = _describe(request)
        else:
            done = {"kind": "failure", "error": f"the worker does not know the request {op!r}"}
    except _Failed as exc:
        done = {"kind": exc.kind, "error": exc.error}
    channel.send({"done": done})
    return 0


if __name__ == "__main__":
    sys.exit(main())
