"""The services of the scale configuration, started on loopback from Debian's packages: a PostgreSQL cluster in a
temporary directory (Dagster's instance storage and the DuckLake catalog of the ledger) and a Redis broker.

Everything started here is a direct child of this process (no daemonizing, no pid files to trust), so `stop()`
signals exactly the pids it started. PostgreSQL refuses to run as root: when this process is root, the cluster is
created and run under an unprivileged account with `setpriv` (which execs in place, so the pid is postgres's own).
"""

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


class ServiceError(RuntimeError):
    """A service could not be found or started; the message says which and why, in one line."""


# Debian installs the server binaries (initdb, postgres) outside PATH, one folder per major version.
_PG_DIRS = ("/usr/lib/postgresql",)
PG_USER = "kavi"
PG_DB = "kavi"


def pg_bin(name: str) -> Path | None:
    """The PostgreSQL server binary NAME: on PATH, else the newest version in Debian's layout."""
    found = shutil.which(name)
    if found:
        return Path(found)
    for base in _PG_DIRS:
        root = Path(base)
        if not root.is_dir():
            continue
        versions = sorted((p for p in root.iterdir() if p.name.isdigit()), key=lambda p: int(p.name), reverse=True)
        for v in versions:
            cand = v / "bin" / name
            if cand.is_file():
                return cand
    return None


def missing_binaries() -> list[str]:
    """What the scale configuration needs from the system and cannot find (empty when it can run)."""
    missing = [n for n in ("initdb", "postgres") if pg_bin(n) is None]
    if shutil.which("redis-server") is None:
        missing.append("redis-server")
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        missing.append("setpriv")
    return missing


def free_port() -> int:
    """A TCP port free on loopback right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _unprivileged() -> tuple[int, int]:
    """The uid and gid PostgreSQL runs as when this process is root: Debian's `postgres` account, else nobody."""
    for name in ("postgres", "nobody"):
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            continue
        return pw.pw_uid, pw.pw_gid
    raise ServiceError("running as root and no unprivileged account (postgres, nobody) to run PostgreSQL as")


def _as_owner(cmd: Sequence[str]) -> list[str]:
    if os.geteuid() != 0:
        return list(cmd)
    uid, gid = _unprivileged()
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *cmd]


def _wait_port(port: int, proc: subprocess.Popen[bytes], what: str, log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace")[-400:] if log.exists() else ""
            raise ServiceError(f"{what} exited with code {proc.returncode} while starting: {tail.strip()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise ServiceError(f"{what} did not answer on 127.0.0.1:{port} within {timeout_s:.0f}s (log: {log})")


@dataclass
class Services:
    """The running services and the pids this process started (stopped in reverse order by `stop`)."""

    workdir: Path
    pg_port: int = 0
    redis_port: int = 0
    procs: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)
    cleanup: list[Path] = field(default_factory=list)

    @property
    def pg_dsn(self) -> str:
        """libpq key/value form: what DuckDB's postgres extension and DuckLake's catalog take."""
        return f"host=127.0.0.1 port={self.pg_port} user={PG_USER} dbname={PG_DB}"

    @property
    def pg_url(self) -> str:
        return f"postgresql+psycopg2://{PG_USER}@127.0.0.1:{self.pg_port}/{PG_DB}"

    @property
    def broker_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def backend_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/1"

    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self.procs}

    def start_postgres(self, timeout_s: float = 60.0) -> None:
        initdb, postgres = pg_bin("initdb"), pg_bin("postgres")
        if initdb is None or postgres is None:
            raise ServiceError("PostgreSQL's initdb/postgres not found (Debian: apt-get install postgresql)")
        # A folder of its own in the system's temporary directory: the unprivileged account must reach it, and
        # the caller's folder may sit below directories only root can enter.
        pgdir = Path(tempfile.mkdtemp(prefix="kavi-pg-"))
        self.cleanup.append(pgdir)
        data, sock = pgdir / "data", pgdir / "sock"
        sock.mkdir()
        if os.geteuid() == 0:
            uid, gid = _unprivileged()
            for d in (pgdir, sock):
                os.chown(d, uid, gid)
        log = self.workdir / "postgres.log"
        init = subprocess.run(_as_owner([str(initdb), "-D", str(data), "-U", PG_USER, "--auth=trust", "-E", "UTF8",
                                         "--no-sync"]), capture_output=True, text=True, timeout=120)
        if init.returncode != 0:
            raise ServiceError(f"initdb failed: {(init.stderr or init.stdout).strip()[-300:]}")
        self.pg_port = free_port()
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                _as_owner([str(postgres), "-D", str(data), "-h", "127.0.0.1", "-p", str(self.pg_port),
                           "-k", str(sock), "-c", "fsync=off", "-c", "max_connections=200"]),
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(("postgres", proc))
        _wait_port(self.pg_port, proc, "postgres", log, timeout_s)
        self._create_database(timeout_s)

    def _create_database(self, timeout_s: float) -> None:
        import psycopg2

        deadline = time.monotonic() + timeout_s
        while True:
            try:
                con = psycopg2.connect(host="127.0.0.1", port=self.pg_port, user=PG_USER, dbname="postgres",
                                       connect_timeout=5)
                break
            except psycopg2.OperationalError as err:  # "the database system is starting up"
                if time.monotonic() > deadline:
                    raise ServiceError(f"postgres on port {self.pg_port} refused connections: {err}") from None
                time.sleep(0.2)
        try:
            con.autocommit = True
            with con.cursor() as cur:
                cur.execute(f"CREATE DATABASE {PG_DB}")
        finally:
            con.close()

    def start_redis(self, timeout_s: float = 30.0) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise ServiceError("redis-server not found (Debian: apt-get install redis-server)")
        self.redis_port = free_port()
        log = self.workdir / "redis.log"
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                [exe, "--bind", "127.0.0.1", "--port", str(self.redis_port), "--save", "", "--appendonly", "no",
                 "--daemonize", "no", "--dir", str(self.workdir), "--protected-mode", "yes"],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(("redis", proc))
        _wait_port(self.redis_port, proc, "redis-server", log, timeout_s)

    def add(self, name: str, proc: subprocess.Popen[bytes]) -> None:
        self.procs.append((name, proc))

    def stop(self, timeout_s: float = 20.0) -> list[str]:
        """Stop every process started here, newest first: SIGTERM (postgres: SIGINT, its fast shutdown), then
        SIGKILL after `timeout_s`. Returns one line per process that needed the SIGKILL."""
        forced: list[str] = []
        for name, proc in reversed(self.procs):
            if proc.poll() is not None:
                continue
            try:
                proc.send_signal(signal.SIGINT if name == "postgres" else signal.SIGTERM)
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
                forced.append(f"{name} (pid {proc.pid}) did not stop in {timeout_s:.0f}s and was killed")
            except ProcessLookupError:
                pass
        self.procs.clear()
        for d in self.cleanup:
            shutil.rmtree(d, ignore_errors=True)
        self.cleanup.clear()
        return forced
