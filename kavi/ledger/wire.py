"""The ledger host's wire protocol, shared by the host and its clients: length-prefixed JSON messages with tagged
values, the file that says where a running host listens, and the client's end of a unit of work."""

import base64
import contextlib
import datetime as dt
import json
import socket
import struct
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

HOST_SUFFIX = ".host"
MAX_MESSAGE = 256 * 1024 * 1024
_HEADER = struct.Struct(">I")


class HostGone(OSError):
    """The ledger host closed the connection or stopped answering."""


# -- values ------------------------------------------------------------------------------------------------------


def encode(value: Any) -> Any:
    """A DuckDB parameter or result value as JSON, with tags for the types JSON lacks."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dt.datetime):
        return {"$": "dt", "v": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$": "d", "v": value.isoformat()}
    if isinstance(value, dt.time):
        return {"$": "tm", "v": value.isoformat()}
    if isinstance(value, dt.timedelta):
        return {"$": "td", "v": [value.days, value.seconds, value.microseconds]}
    if isinstance(value, Decimal):
        return {"$": "dec", "v": str(value)}
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$": "b", "v": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, uuid.UUID):
        return {"$": "u", "v": str(value)}
    if isinstance(value, dict):
        return {"$": "map", "v": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"$": "tup", "v": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    raise TypeError(f"the ledger host cannot carry a {type(value).__name__}")


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    tag, raw = value.get("$"), value["v"]
    if tag == "dt":
        return dt.datetime.fromisoformat(raw)
    if tag == "d":
        return dt.date.fromisoformat(raw)
    if tag == "tm":
        return dt.time.fromisoformat(raw)
    if tag == "td":
        return dt.timedelta(days=raw[0], seconds=raw[1], microseconds=raw[2])
    if tag == "dec":
        return Decimal(raw)
    if tag == "b":
        return base64.b64decode(raw)
    if tag == "u":
        return uuid.UUID(raw)
    if tag == "map":
        return {decode(k): decode(v) for k, v in raw}
    if tag == "tup":
        return tuple(decode(v) for v in raw)
    raise ValueError(f"unknown value tag {tag!r}")


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    if len(data) > MAX_MESSAGE:
        raise ValueError(f"a ledger message of {len(data)} bytes is over the {MAX_MESSAGE}-byte limit")
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise HostGone("the ledger host connection closed")
        buf.extend(chunk)
    return bytes(buf)


def recv(sock: socket.socket) -> dict[str, Any]:
    (size,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    if size > MAX_MESSAGE:
        raise HostGone(f"a ledger message of {size} bytes is over the limit")
    doc = json.loads(_recv_exact(sock, size))
    if not isinstance(doc, dict):
        raise HostGone("a ledger message is not an object")
    return doc


# -- where a running host is -------------------------------------------------------------------------------------


def host_file(ledger: Path) -> Path:
    return ledger.with_name(ledger.name + HOST_SUFFIX)


def find_host(ledger: Path) -> str | None:
    """The socket of a live host for this ledger file, or None (no host file, or its process is gone)."""
    from kavi.process_owner import ProcessOwner

    try:
        doc = json.loads(host_file(ledger).read_text(encoding="utf-8"))
        owner = ProcessOwner(int(doc["pid"]), str(doc.get("host", "")), str(doc.get("start", "")))
        sock = str(doc["socket"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return sock if owner.alive() else None


# -- the client side ---------------------------------------------------------------------------------------------


def _raise_remote(error: dict[str, Any]) -> None:
    kind = getattr(duckdb, str(error.get("type", "")), None)
    cls = kind if isinstance(kind, type) and issubclass(kind, duckdb.Error) else duckdb.Error
    raise cls(str(error.get("message", "")))


def _params(params: Any) -> Any:
    """Positional parameters as a list, named ones ($name) as a map."""
    return encode(dict(params) if isinstance(params, Mapping) else list(params))


class RemoteConnection:
    """One unit of work at the host, with the part of DuckDB's connection interface the ledger code uses
    (`execute`/`executemany` returning the connection, then `fetchall`/`fetchone`; `close`). Results are fetched
    whole by the host with each statement."""

    def __init__(self, socket_path: str, wait_s: float) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.settimeout(wait_s + 30.0)
            self._sock.connect(socket_path)
            send(self._sock, {"op": "open", "wait_s": wait_s})
            reply = recv(self._sock)
        except (OSError, ValueError):
            self._sock.close()
            raise
        if not reply.get("ok"):
            self._sock.close()
            raise TimeoutError(str(reply.get("why", "the ledger host did not grant a session")))
        self._sock.settimeout(None)
        self._rows: list[tuple[Any, ...]] = []
        self._pos = 0
        self.waited_s = float(reply.get("waited_s", 0.0))
        # The version the host brought the file's schema to (it alone writes the file while it serves it).
        version = reply.get("schema_version")
        self.schema_version = version if isinstance(version, int) else None

    def _call(self, message: dict[str, Any]) -> "RemoteConnection":
        try:
            send(self._sock, message)
            reply = recv(self._sock)
        except OSError as err:
            raise duckdb.ConnectionException(f"the ledger host went away: {err}") from None
        if "error" in reply:
            _raise_remote(reply["error"])
        self._rows = [tuple(decode(r)) for r in reply.get("rows") or []]
        self._pos = 0
        return self

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> "RemoteConnection":
        return self._call({"op": "execute", "sql": sql, "params": _params(params) if params is not None else None})

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> "RemoteConnection":
        return self._call({"op": "executemany", "sql": sql, "params": [_params(p) for p in params]})

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self._pos = self._rows[self._pos:], len(self._rows)
        return rows

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._pos >= len(self._rows):
            return None
        self._pos += 1
        return self._rows[self._pos - 1]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            send(self._sock, {"op": "close"})
            recv(self._sock)
        self._sock.close()
