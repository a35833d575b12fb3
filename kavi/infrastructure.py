"""Which gate failures are the forge's own (infrastructure), not the model's: a tool that cannot execute (126) or
is not found (127), a sandbox that could not set up its isolation, a full disk or a file-size limit in the forge's
own writes, a gate that crashed. Such an attempt says nothing about the model, so it never feeds the router."""

import errno
import re
import shutil
import signal
from collections.abc import Sequence
from pathlib import Path

from kavi.verdicts import GATE_ACCEPTANCE, GATE_COACH, GATE_MYPY, GATE_PYTEST, GATE_RUFF, GateResult

EXIT_CANNOT_EXECUTE = 126
EXIT_NOT_FOUND = 127
INFRA_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EMFILE, errno.ENFILE})

# The forge's own tools: what they write (caches, reports) is the forge's write, whatever the skill says.
_TOOL_GATES = (GATE_RUFF, GATE_MYPY)
_EXIT_IN_REASON = re.compile(r"\(exit (-?\d+)\)|exited (-?\d+)")
_DISK = re.compile(r"No space left on device|Disk quota exceeded|\[Errno (?:28|122)\]|File too large|\[Errno 27\]|"
                   r"Read-only file system")
_GATE_CRASH = "the gate itself failed"


def is_infra_oserror(err: BaseException) -> bool:
    """A full disk, a quota, a file-size limit, a read-only file system, no file descriptors left."""
    return isinstance(err, OSError) and err.errno in INFRA_ERRNOS


def describe_oserror(err: OSError) -> str:
    where = f" writing {err.filename}" if err.filename else ""
    what = {
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is exhausted",
        errno.EFBIG: "a file-size limit stopped a write",
        errno.EROFS: "the file system is read-only",
    }.get(err.errno or 0, "the system ran out of a resource")
    return f"{what}{where} ({err.strerror or err})"


def _exit_code(result: GateResult) -> int | None:
    rc = result.details.get("returncode")
    if isinstance(rc, int) and not isinstance(rc, bool):
        return rc
    hit = _EXIT_IN_REASON.search(result.reason)
    if hit:
        return int(hit.group(1) or hit.group(2))
    return None


def infrastructure_cause(result: GateResult) -> str | None:
    """Why this failed gate is the forge's fault, or None when the failure may be the model's."""
    if result.ok:
        return None
    if result.gate == GATE_COACH and result.details.get("coach_failure"):
        # The coach model failed (its endpoint, or an answer outside the schema): the reviewer's failure, which says
        # nothing about the builder's code. Retried like any infrastructure failure; its repeats escalate.
        return f"the coach could not review: {str(result.details['coach_failure'])[:200]}"
    if result.reason.startswith(_GATE_CRASH):
        return f"the {result.gate} gate crashed: {result.reason[len(_GATE_CRASH):].lstrip(': ')}"
    rc = _exit_code(result)
    if result.gate in (GATE_PYTEST, GATE_ACCEPTANCE) and result.details.get("sandbox_started") is True:
        # The sandbox was built and the command started (a marker written before the exec): whatever the code
        # did next — exit 126 or 127, print "bwrap: …" — was the builder's doing.
        return None
    if rc in (EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND):
        what = "could not be executed" if rc == EXIT_CANNOT_EXECUTE else "was not found"
        if result.gate in _TOOL_GATES:
            return f"the {result.gate} tool {what} (exit {rc}); reinstall the gate tools: pip install -e '.[dev]'"
        # A code-running gate: only when nothing of the builder's ran (a test could exit 127 itself).
        ran_tests = result.details.get("tests")
        if result.gate == GATE_PYTEST and isinstance(ran_tests, int) and ran_tests > 0:
            return None
        if result.gate in (GATE_PYTEST, GATE_ACCEPTANCE) or result.gate.startswith("coverage"):
            return (f"the {result.gate} gate's sandbox or interpreter {what} (exit {rc}); check the sandbox tools "
                    "(`kavi doctor`)")
    ran_nothing = result.gate == GATE_ACCEPTANCE or not result.details.get("tests")
    if result.gate in (GATE_PYTEST, GATE_ACCEPTANCE) and ran_nothing:
        setup = next((m for m in result.messages if m.startswith("bwrap: ")), None)
        if setup is not None:
            return f"the {result.gate} gate's sandbox could not be set up ({setup[:200]}); run `kavi doctor`"
    if result.gate in _TOOL_GATES:
        if result.reason.startswith("ruff did not run"):
            return f"ruff did not run ({result.reason[len('ruff did not run'):].lstrip(': ')[:200]})"
        if rc is not None and rc < 0 and -rc == signal.SIGXFSZ:
            return f"{result.gate} hit the file-size limit writing its own files (signal SIGXFSZ)"
        # Exit 1 is the tool's verdict on the code (whose strings its messages may quote): never infrastructure.
        text = "\n".join([result.reason, *result.messages])
        disk = _DISK.search(text) if rc not in (0, 1) else None
        if disk:
            return f"{result.gate} could not write its own files: {disk.group(0)}"
    return None


# -- a full disk, in every library's wording ---------------------------------------------------------------------------
# The OS says ENOSPC or EDQUOT; DuckDB quotes the OS; SQLite (Dagster's run and event storage) says "database or disk
# is full", or "disk I/O error" when a journal or WAL write is the one refused. That last wording is also a failing
# disk, so it counts as a full disk only when the disk it names has next to nothing free.
_FULL_WORDS = re.compile(r"No space left on device|\[Errno (?:28|122)\]|Disk quota exceeded|database or disk is full|"
                         r"SQLITE_FULL", re.IGNORECASE)
_IO_WORDS = re.compile(r"disk I/O error|SQLITE_IOERR", re.IGNORECASE)
LOW_FREE_BYTES = 32 << 20
DISK_FULL_FIX = ("free space on the disk that holds the skills home (KAVI_HOME) and DAGSTER_HOME, or point KAVI_HOME "
                 "at a disk with room, then run the command again")


def _chain(err: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and current not in seen and len(seen) < 20:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def low_on_space(paths: Sequence[Path]) -> bool:
    """Whether any of `paths` (or its nearest existing parent) is on a disk with next to nothing free."""
    for path in paths:
        probe = Path(path)
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        try:
            if shutil.disk_usage(probe).free < LOW_FREE_BYTES:
                return True
        except OSError:
            continue
    return False


def is_disk_full(err: BaseException | str, paths: Sequence[Path] = ()) -> bool:
    """A full disk (or quota) behind `err` or its causes, in whatever wording the library that met it uses."""
    texts = [err] if isinstance(err, str) else []
    if not isinstance(err, str):
        for e in _chain(err):
            if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
                return True
            texts.append(str(e))
    if any(_FULL_WORDS.search(t) for t in texts):
        return True
    return bool(paths) and any(_IO_WORDS.search(t) for t in texts) and low_on_space(paths)


class EnvironmentFailure(Exception):
    """The forge's environment stopped a command (a full disk, the ledger file, the endpoint): one line for the
    person, exit status 3, never a traceback."""
