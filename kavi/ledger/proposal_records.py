"""Proposals, the revisions of their specs and their status events: what was proposed and where each stands."""

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from kavi.ledger.record_base import LedgerRecordError, RecordsBase, _iso_sql
from kavi.ledger.store import utcnow
from kavi.lifecycle import ProposalStatus
from kavi.proposals.model import RECORDED, Proposal
from kavi.skills.base import SideEffectClass


@dataclass(frozen=True)
class ProposalRow:
    proposal: Proposal
    spec_sha256: str
    status: ProposalStatus  # the lifecycle of the latest candidate; trust belongs to versions (`trusted_version`)
    complexity: float | None
    created_at: datetime
    updated_at: datetime
    revision: int = 1
    trusted_version: int | None = None


@dataclass(frozen=True)
class RevisionRow:
    """One revision of a proposal's spec: what changed from the revision before it."""

    name: str
    revision: int
    spec_sha256: str
    side_effect_class: SideEffectClass
    previous_class: str | None
    diff: list[dict[str, Any]]
    actor: str | None
    created_at: datetime

    @property
    def class_change(self) -> tuple[str, str] | None:
        """(from, to) when this revision changes the side-effect class."""
        if self.previous_class is None or self.previous_class == self.side_effect_class.value:
            return None
        return self.previous_class, self.side_effect_class.value


@dataclass(frozen=True)
class RevisionOutcome:
    """What re-proposing did: a new revision (with its diff), or nothing (the spec is the current revision's)."""

    name: str
    revision: int
    created: bool
    diff: list[dict[str, Any]]
    class_change: tuple[str, str] | None


def spec_diff(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The top-level fields of a spec that differ, each with its old and new value."""
    return [{"field": k, "from": old.get(k), "to": new.get(k)} for k in sorted(set(old) | set(new))
            if old.get(k) != new.get(k)]


def _set_status(
    con: duckdb.DuckDBPyConnection, name: str, to_status: ProposalStatus, build_id: str | None, reason: str,
    actor: str, now: datetime,
) -> None:
    """Move NAME to `to_status` inside the caller's transaction, with its status event."""
    row = con.execute("SELECT status FROM proposals WHERE name = ?", [name]).fetchone()
    if row is None:
        raise LedgerRecordError(f"no proposal named {name!r}")
    con.execute("UPDATE proposals SET status = ?, updated_at = ? WHERE name = ?", [to_status.value, now, name])
    _event(con, name, str(row[0]), to_status, build_id, reason, actor, now)


def _event(
    con: duckdb.DuckDBPyConnection, name: str, from_status: str | None, to_status: ProposalStatus,
    build_id: str | None, reason: str, actor: str, now: datetime,
) -> None:
    con.execute(
        "INSERT INTO status_events VALUES (?, ?, ?, ?, ?, ?, ?)",
        [name, from_status, to_status.value, build_id, reason, actor, now],
    )


class ProposalRecords(RecordsBase):
    """Proposals, their revisions and status events."""

    def register_proposal(
        self, proposal: Proposal, *, source_path: str | None, complexity: float | None, actor: str = "kavi"
    ) -> bool:
        """Record a proposal; returns False when the identical spec is already its current revision."""
        return self.propose_revision(proposal, source_path=source_path, complexity=complexity, actor=actor).created

    def propose_revision(
        self, proposal: Proposal, *, source_path: str | None, complexity: float | None, actor: str = "kavi"
    ) -> RevisionOutcome:
        """Record a proposal, or a new revision of one whose spec changed (never an edit of a trusted version:
        versions keep the revision they were built from). The identical spec is a no-op."""
        spec_json = proposal.canonical_json()
        spec_sha = hashlib.sha256(spec_json.encode()).hexdigest()
        new_class = proposal.side_effect_class.value
        now = utcnow()
        with self.ledger.connect() as con:
            row = con.execute(
                "SELECT spec_sha256, status, coalesce(revision, 1), spec_json, side_effect_class FROM proposals "
                "WHERE name = ?", [proposal.name]
            ).fetchone()
            if row is not None and row[0] == spec_sha:
                return RevisionOutcome(proposal.name, int(row[2]), False, [], None)
            if row is None:
                revision, diff, previous = 1, [], None
                con.execute(
                    "INSERT INTO proposals (name, spec_json, spec_sha256, side_effect_class, complexity, status, "
                    "source_path, created_at, updated_at, revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                    [proposal.name, spec_json, spec_sha, new_class, complexity, ProposalStatus.PROPOSED.value,
                     source_path, now, now],
                )
                _event(con, proposal.name, None, ProposalStatus.PROPOSED, None, "proposed", actor, now)
            else:
                revision, previous = int(row[2]) + 1, str(row[4])
                diff = spec_diff(json.loads(row[3]), json.loads(spec_json))
                con.execute(
                    "UPDATE proposals SET spec_json = ?, spec_sha256 = ?, side_effect_class = ?, complexity = ?, "
                    "status = ?, source_path = ?, updated_at = ?, revision = ? WHERE name = ?",
                    [spec_json, spec_sha, new_class, complexity, ProposalStatus.PROPOSED.value, source_path, now,
                     revision, proposal.name],
                )
                change = f"; side_effect_class {previous} → {new_class}" if previous != new_class else ""
                _event(con, proposal.name, str(row[1]), ProposalStatus.PROPOSED, None,
                       f"spec revised: revision {revision} ({', '.join(d['field'] for d in diff)}){change}",
                       actor, now)
            con.execute("INSERT INTO proposal_revisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [proposal.name, revision, spec_json, spec_sha, new_class, previous,
                         json.dumps(diff, default=str), actor, source_path, now])
        change_pair = (previous, new_class) if previous is not None and previous != new_class else None
        return RevisionOutcome(proposal.name, revision, True, diff, change_pair)

    def record_close_skills(self, proposal: Proposal, ranking: str, close: list[dict[str, Any]]) -> None:
        """What the duplicate guard found for this spec of the proposal (kavi.search.guard)."""
        spec_sha = hashlib.sha256(proposal.canonical_json().encode()).hexdigest()
        with self.ledger.connect() as con:
            con.execute("INSERT INTO close_skills VALUES (?, ?, ?, ?, ?)",
                        [proposal.name, spec_sha, ranking, json.dumps(close, default=str), utcnow()])

    def close_skills(self, name: str, spec_sha256: str) -> tuple[str, list[dict[str, Any]]] | None:
        """The guard's latest findings for that spec of NAME: (how it ranked, the closest skills), or None."""
        with self.ledger.connect() as con:
            row = con.execute("SELECT ranking, close_json FROM close_skills WHERE proposal_name = ? AND "
                              "spec_sha256 = ? ORDER BY created_at DESC LIMIT 1", [name, spec_sha256]).fetchone()
        return None if row is None else (str(row[0]), json.loads(row[1]))

    def revisions(self, name: str) -> list[RevisionRow]:
        """Every revision of NAME's spec, oldest first."""
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT name, revision, spec_sha256, side_effect_class, previous_class, diff_json, actor, created_at "
                "FROM proposal_revisions WHERE name = ? ORDER BY revision", [name]).fetchall()
        return [RevisionRow(r[0], int(r[1]), r[2], SideEffectClass(r[3]), r[4], json.loads(r[5]), r[6], r[7])
                for r in rows]

    def get_proposal(self, name: str) -> ProposalRow | None:
        with self.ledger.connect() as con:
            row = con.execute(
                "SELECT spec_json, spec_sha256, status, complexity, created_at, updated_at, coalesce(revision, 1), "
                "trusted_version FROM proposals WHERE name = ?",
                [name],
            ).fetchone()
        if row is None:
            return None
        return ProposalRow(Proposal.model_validate_json(row[0], context=RECORDED), row[1], ProposalStatus(row[2]),
                           row[3], row[4], row[5], int(row[6]), row[7])

    def require_proposal(self, name: str) -> ProposalRow:
        row = self.get_proposal(name)
        if row is None:
            raise LedgerRecordError(f"no proposal named {name!r} in the ledger; run `kavi propose FILE` first")
        return row

    def list_status(self, name: str | None = None) -> list[dict[str, Any]]:
        """One row per proposal (or only NAME's): status, attempts, latest build, its model and failure kind,
        read from the proposals table alone (each row mirrors its latest build)."""
        with self.ledger.connect() as con:
            rows = con.execute(
                f"""
                SELECT name, status, side_effect_class, complexity, {_iso_sql("updated_at")},
                       coalesce(attempts, 0), latest_build_id, latest_model, latest_failure_kind, latest_build_status,
                       coalesce(revision, 1), trusted_version
                FROM proposals {"WHERE name = $name" if name is not None else ""}
                ORDER BY name
                """,
                {"name": name} if name is not None else None,
            ).fetchall()
        return [
            {"name": r[0], "status": r[1], "side_effect_class": r[2], "complexity": r[3], "updated_at": r[4],
             "attempts": r[5], "latest_build": r[6], "model": r[7], "failure_kind": r[8], "build_status": r[9],
             "revision": r[10], "trusted_version": r[11]}
            for r in rows
        ]

    def set_status(
        self, name: str, to_status: ProposalStatus, *, build_id: str | None, reason: str, actor: str = "forge"
    ) -> None:
        now = utcnow()
        with self.ledger.connect() as con:
            _set_status(con, name, to_status, build_id, reason, actor, now)

    def status_events(self, name: str) -> list[dict[str, Any]]:
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT from_status, to_status, build_id, reason, actor, created_at FROM status_events "
                "WHERE proposal_name = ? ORDER BY created_at",
                [name],
            ).fetchall()
        return [
            {"from": r[0], "to": r[1], "build_id": r[2], "reason": r[3], "actor": r[4],
             "at": r[5].isoformat()}
            for r in rows
        ]
