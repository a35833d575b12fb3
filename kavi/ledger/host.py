"""The ledger host process: it holds the ledger file's only connection and serves units of work over a local
socket (kavi/ledger/wire.py), and `ledger_host` starts and stops it around a batch."""

import argparse
import contextlib
import json
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from kavi.ledger.store import Ledger
from kavi.ledger.wire import decode, encode, find_host, host_file, recv, send


class LedgerHost:
    """One process holds the file and N forge processes write through it, instead of each opening the file for each
    unit of work and taking turns at DuckDB's file lock: a unit of work then costs a socket round trip per statement
    and waits in a queue instead of retrying.

    What holds, as with the file:
    - a unit of work (`Ledger.connect`) is one transaction, alone on the connection from its BEGIN to its COMMIT or
      ROLLBACK: units are serialised by the host's session lock, as they were by the file lock; a client that dies
      or disconnects mid-unit has its transaction rolled back;
    - DuckDB is still the engine: the host runs the same SQL on the same file, and the lineage is queried the same
      way;
    - every other process finds the host through `<ledger>.host` next to the file (socket path, pid, start time) and
      goes through it while it runs, so `kavi status` in another shell works during a batch instead of meeting a lock.

    Values cross the socket as JSON with tagged types, never as pickles: nothing received is ever executed. The
    socket lives in a private directory (mode 0700). The host exits on SIGTERM or when the process that started it
    is gone, closing (checkpointing) the file.
    """

    def __init__(self, ledger: Path, socket_path: str) -> None:
        # The schema is current before the first client's unit of work; each client is told which version, so a
        # client of the same code skips its own check (two reads per unit of work, five units per run).
        self.schema_version = Ledger(ledger, lake=False).migrate()
        self.con = duckdb.connect(str(ledger))
        # The ledger's units are point reads and small inserts: on one thread each statement skips waking DuckDB's
        # worker threads, which costs more CPU than it saves.
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
