"""Attempts and sandboxes left behind by a process that died mid-attempt (a `kill -9`, a crashed worker).

An attempt is open while its build is in PACKET or BUILT. Every attempt runs under its proposal's attempt lock
(kavi.forge.locks), which dies with its process: an open attempt whose proposal lock is free has no live
run and never will. It is closed as ABANDONED — a new status string in the existing `builds.status` column, no
schema change — without a model outcome: the model did nothing wrong, so the learner is not charged. Its sandbox
is removed. No Dagster here: the stale runs are the Dagster layer's (sensors/sweep.py).
"""

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kavi.forge.attempt import BUILD_FAILED
from kavi.forge.locks import ProposalBusy, attempt_lock, is_free
from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.lifecycle import FailureKind, ProposalStatus

ABANDONED = "ABANDONED"
# A build its own process closed after the environment stopped the run (a full disk): failed, kind INFRASTRUCTURE.
CUT_SHORT = BUILD_FAILED
OPEN_STATES = ("PACKET", "BUILT")


@dataclass(frozen=True)
class OpenAttempt:
    build_id: str
    name: str
    attempt: int
    status: str
    run_id: str | None

    def describe(self) -> str:
        return f"{self.name} attempt {self.attempt} ({self.build_id}, {self.status}" + (
            f", run {self.run_id[:8]})" if self.run_id else ")")


def open_attempts(records: ForgeRecords) -> list[OpenAttempt]:
    with records.ledger.connect() as con:
        rows = con.execute(
            "SELECT build_id, proposal_name, attempt_number, status, run_id FROM builds "
            f"WHERE status IN ({', '.join('?' for _ in OPEN_STATES)}) ORDER BY proposal_name, attempt_number",
            list(OPEN_STATES),
        ).fetchall()
    return [OpenAttempt(str(r[0]), str(r[1]), int(r[2]), str(r[3]), r[4]) for r in rows]


def abandoned_attempts(home: KaviHome, records: ForgeRecords,
                       run_is_live: Callable[[str], bool] | None = None) -> list[OpenAttempt]:
    """Open attempts nobody is working on: the proposal's lock is free (and the run, when known, is not live).

    The calling thread must not hold the proposal's lock (the lock is re-entrant for its holder)."""
    out = []
    for a in open_attempts(records):
        if run_is_live is not None and a.run_id and run_is_live(a.run_id):
            continue
        if is_free(home, a.name):
            out.append(a)
    return out


def close_abandoned(home: KaviHome, records: ForgeRecords, attempt: OpenAttempt, reason: str) -> bool:
    """Close one abandoned attempt as ABANDONED (no model outcome) and remove its sandbox; False when it turned
    out to be live after all (its lock was taken, or its status moved on)."""
    try:
        with attempt_lock(home, attempt.name, wait_s=0):
            with records.session():
                build = records.get_build(attempt.build_id)
                if build is None or build.status not in OPEN_STATES:
                    return False
                records.finish_build(attempt.build_id, status=ABANDONED, failure_kind=None)
                row = records.get_proposal(attempt.name)
                if row is not None and row.status is ProposalStatus.BUILT:
                    records.set_status(attempt.name, ProposalStatus.PROPOSED, build_id=attempt.build_id,
                                       reason=f"attempt {attempt.attempt} abandoned: {reason}", actor="kavi sweep")
            remove_sandbox(home, attempt.build_id)
            return True
    except ProposalBusy:
        return False


def sandbox_of(home: KaviHome, build_id: str) -> Path:
    return home.inside(home.sandboxes_dir / build_id)


def remove_sandbox(home: KaviHome, build_id: str) -> bool:
    path = sandbox_of(home, build_id)
    if not path.exists():
        return False
    shutil.rmtree(path, ignore_errors=True)
    return not path.exists()


def leaked_sandboxes(home: KaviHome, records: ForgeRecords) -> list[Path]:
    """Sandboxes no attempt will use again: of an ABANDONED build, or of a build the ledger does not know."""
    if not home.sandboxes_dir.is_dir():
        return []
    dirs = {p.name: p for p in home.sandboxes_dir.iterdir() if p.is_dir() and not p.is_symlink()}
    if not dirs:
        return []
    with records.ledger.connect() as con:
        known = {str(r[0]): str(r[1]) for r in con.execute("SELECT build_id, status FROM builds").fetchall()}
    return sorted(p for name, p in dirs.items() if known.get(name, ABANDONED) == ABANDONED)


def close_cut_short(home: KaviHome, records: ForgeRecords, name: str, run_id: str, reason: str) -> OpenAttempt | None:
    """The attempt of `run_id`, when the run was cut short by the forge's environment (a full disk) and left it
    open: closed as a failed build of kind INFRASTRUCTURE (no model outcome), its proposal back to what it was
    before the build, its sandbox removed. None when the run left no open attempt. The caller holds the lock."""
    with records.session():
        build = next((b for b in records.builds(name) if b.run_id == run_id), None)
        if build is None or build.status not in OPEN_STATES:
            return None
        records.finish_build(build.build_id, status=CUT_SHORT, failure_kind=FailureKind.INFRASTRUCTURE.value)
        row = records.get_proposal(name)
        if row is not None and row.status is ProposalStatus.BUILT:
            records.set_status(name, ProposalStatus.PROPOSED, build_id=build.build_id,
                               reason=f"attempt {build.attempt_number} cut short: {reason}"[:500], actor="kavi")
    remove_sandbox(home, build.build_id)
    return OpenAttempt(build.build_id, name, build.attempt_number, build.status, run_id)
