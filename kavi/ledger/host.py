"""The ledger host: one process holds the ledger file's only connection and serves units of work over a local
socket, so N forge processes write through one writer instead of taking turns at DuckDB's file lock.

Why (issue 13, measured with 8 concurrent runs on 50 proposals): each process opening the file for each unit of
work paid 16–21 ms of CPU per open (the catalog read, the checkpoint at close), 19 opens per proposal, and waited a
mean 0.28 s per open (2,300 failed lock attempts) while another process held the file: seconds of every run's wall
time spent queueing at the lock. Through the host, a unit of work costs a socket round trip per statement (about
0.1 ms) and waits in a queue instead of retrying.

What holds, as with the file:
- a unit of work (`Ledger.connect`) is one transaction, alone on the connection from its BEGIN to its COMMIT or
  ROLLBACK: units are serialised by the host's session lock, as they were by the file lock; a client that dies or
  disconnects mid-unit has its transaction rolled back;
- DuckDB is still the engine: the host runs the same SQL on the same file, and the lineage is queried the same way;
- every other process finds the host through `<ledger>.host` next to the file (socket path, pid, start time) and goes
  through it while it runs, so `kavi status` in another shell works during a batch instead of meeting a lock.

Values cross the socket as JSON with tagged types (timestamps, dates, decimals, UUIDs, bytes, intervals, maps),
never as pickles: nothing received is ever executed. The socket lives in a private directory (mode 0700).
The host exits on SIGTERM or when the process that started it is gone, closing (checkpointing) the file.
"""

import argparse
import base64
import contextlib
import datetime as dt
import json
import os
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
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


# -- the host ----------------------------------------------------------------------------------------------------


class LedgerHost:
    def __init__(self, ledger: Path, socket_path: str) -> None:
        from kavi.ledger.store import Ledger

        # The schema is current before the first client's unit of work; each client is told which version, so a
        # client of the same code skips its own check (two reads per unit of work, five units per run).
        self.schema_version = Ledger(ledger, lake=False).migrate()
        self.con = duckdb.connect(str(ledger))
        # The ledger's units are point reads and small inserts: on one thread each statement skips waking DuckDB's
        # worker threads (measured here: 0.8 instead of 1.0 ms of CPU per read, 0.4 instead of 0.6 per insert).
        self.con.execute("SET threads = 1")
        self.session = threading.Lock()
        self.stop = threading.Event()
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(socket_path)
        self.server.listen(128)

    def _rollback(self) -> None:
        with contextlib.suppress(duckdb.Error):
            self.con.execute("ROLLBACK")

    def _statement(self, msg: dict[str, Any]) -> dict[str, Any]:
        try:
            if msg.get("op") == "executemany":
                cur = self.con.executemany(str(msg["sql"]), [decode(p) for p in msg.get("params") or []])
            else:
                params = msg.get("params")
                cur = self.con.execute(str(msg["sql"]), decode(params) if params is not None else None)
            try:
                rows = cur.fetchall()
            except duckdb.InvalidInputException:  # a statement without a result set
                rows = []
            return {"rows": [encode(list(r)) for r in rows]}
        except duckdb.Error as err:
            return {"error": {"type": type(err).__name__, "message": str(err)}}
        except (TypeError, ValueError, KeyError) as err:
            return {"error": {"type": "InvalidInputException", "message": f"the ledger host refused it: {err}"}}

    def _client(self, sock: socket.socket) -> None:
        granted = False
        try:
            msg = recv(sock)
            if msg.get("op") != "open":
                return
            started = time.monotonic()
            wait_s = min(max(float(msg.get("wait_s", 30.0)), 0.0), 3600.0)
            granted = self.session.acquire(timeout=wait_s)
            if not granted:
                send(sock, {"ok": False, "why": f"no session within {wait_s:.0f}s"})
                return
            send(sock, {"ok": True, "waited_s": round(time.monotonic() - started, 6),
                        "schema_version": self.schema_version})
            while True:
                msg = recv(sock)
                if msg.get("op") == "close":
                    send(sock, {"ok": True})
                    return
                send(sock, self._statement(msg))
        except (OSError, ValueError):
            return  # the client went away: its transaction is rolled back below
        finally:
            if granted:
                self._rollback()  # a unit that ended without COMMIT leaves nothing behind
                self.session.release()
            sock.close()

    def serve(self) -> None:
        self.server.settimeout(0.2)  # how soon a stop request is seen
        while not self.stop.is_set():
            try:
                sock, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            sock.settimeout(None)
            threading.Thread(target=self._client, args=(sock,), daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.server.close()
        with self.session:  # the unit in flight finishes first
            self.con.close()


@contextlib.contextmanager
def _host_file(ledger: Path, socket_path: str) -> Iterator[None]:
    from kavi.process_owner import ProcessOwner

    me = ProcessOwner.current()
    path = host_file(ledger)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"socket": socket_path, "pid": me.pid, "host": me.host, "start": me.start}),
                   encoding="utf-8")
    os.replace(tmp, path)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            doc = json.loads(path.read_text(encoding="utf-8"))
            if doc.get("pid") == me.pid:
                path.unlink()


START_TIMEOUT_S = 60.0


@contextlib.contextmanager
def ledger_host(ledger: Path) -> Iterator[int | None]:
    """A ledger host for this file during the block (yields its pid); None when one already serves it, or when it
    could not start (then every process opens the file itself, as without a host, and the reason is on stderr)."""
    import subprocess

    if find_host(ledger) is not None:
        yield None
        return
    ledger.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "kavi.ledger.host", "--ledger", str(ledger)],
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    ready: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: ready.update(_first_line(proc)), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT_S)
    if not ready.get("ready"):
        _stop(proc)
        print(f"note: the ledger host did not start ({ready.get('error') or 'no answer'}); every run opens the "
              "ledger file itself", file=sys.stderr)
        yield None
        return
    try:
        yield proc.pid
    finally:
        _stop(proc)


def _first_line(proc: Any) -> dict[str, Any]:
    line = proc.stdout.readline() if proc.stdout is not None else ""
    try:
        doc = json.loads(line)
    except ValueError:
        return {"error": line.strip()[:300] or f"it exited ({proc.poll()})"}
    return doc if isinstance(doc, dict) else {}


def _stop(proc: Any) -> None:
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(60)
    except Exception:  # it did not stop: a unit of work hangs; the file lock goes with the process
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kavi.ledger.host")
    parser.add_argument("--ledger", type=Path, required=True)
    args = parser.parse_args(argv)
    ledger = args.ledger.resolve()
    folder = Path(tempfile.mkdtemp(prefix="kavi-ledger-"))  # mode 0700: only this user reaches the socket
    socket_path = str(folder / "s")
    parent = os.getppid()
    try:
        try:
            host = LedgerHost(ledger, socket_path)
        except Exception as err:  # the starter reads this line and reports it
            print(json.dumps({"ready": False, "error": f"{type(err).__name__}: {err}"[:500]}), flush=True)
            raise SystemExit(2) from None

        def stop(*_: object) -> None:
            host.stop.set()
            host.server.close()  # the accept this interrupted ends now, not at its next timeout

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)

        def orphaned() -> None:  # the starter was killed: nothing will stop this host otherwise
            while not host.stop.wait(1.0):
                if os.getppid() != parent:
                    host.stop.set()

        threading.Thread(target=orphaned, daemon=True).start()
        with _host_file(ledger, socket_path):
            print(json.dumps({"ready": True, "socket": socket_path, "pid": os.getpid()}), flush=True)
            host.serve()
            host.close()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(socket_path)
        with contextlib.suppress(OSError):
            folder.rmdir()
    sys.exit(0)


if __name__ == "__main__":
    main()
