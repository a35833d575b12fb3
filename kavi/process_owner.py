"""Which process owns a run: pid, host and process start time, recorded as run tags and checked for liveness.

The CLI executes runs in its own process; when that process is killed, nothing tells Dagster. The owner tags
let a later sweep tell a run whose process is gone (a stale run) from one that is still working. The start time
guards against a reused pid."""

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PID_TAG = "kavi/pid"
HOST_TAG = "kavi/host"
START_TAG = "kavi/pid_start"


def process_start(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux /proc); empty where it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""
    # The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else ""


def hostname() -> str:
    return socket.gethostname()


@dataclass(frozen=True)
class ProcessOwner:
    pid: int
    host: str
    start: str

    @classmethod
    def current(cls) -> "ProcessOwner":
        pid = os.getpid()
        return cls(pid, hostname(), process_start(pid))

    @classmethod
    def from_tags(cls, tags: Mapping[str, str]) -> "ProcessOwner | None":
        raw = tags.get(PID_TAG, "")
        if not raw.isdigit():
            return None
        return cls(int(raw), tags.get(HOST_TAG, ""), tags.get(START_TAG, ""))

    def tags(self) -> dict[str, str]:
        return {PID_TAG: str(self.pid), HOST_TAG: self.host, START_TAG: self.start}

    def alive(self) -> bool | None:
        """True or False on this host; None when the owner ran on another host (this machine cannot tell)."""
        if self.host and self.host != hostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # it exists, under another user
        if self.start:
            now = process_start(self.pid)
            if now and now != self.start:
                return False  # the pid was reused by a newer process
        return True

    def describe(self) -> str:
        return f"pid {self.pid}" + (f" on {self.host}" if self.host else "")
