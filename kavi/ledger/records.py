"""Typed reads and batched writes of the forge lifecycle: proposals, builds, verdicts, notes, promotions."""

import hashlib
import json
import uuid
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb

from kavi.gates.types import GateResult
from kavi.ledger.artifacts import ArtifactRef
from kavi.ledger.store import Ledger, utcnow
from kavi.lifecycle import ProposalStatus
from kavi.proposals.model import Proposal
from kavi.skills.base import SideEffectClass

GENESIS_HASH = "0" * 64


class LedgerRecordError(LookupError):
    """A record the caller relies on is missing."""


class LedgerConflictError(LedgerRecordError):
    """A record that must be unique (a build id, an attempt of a proposal) is already there."""


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ARTIFACT_COLS = ("sha256", "kind", "size", "path", "created_at")
_GATE_COLS = ("build_id", "gate", "verdict", "effective_verdict", "reason", "duration_ms", "messages_json",
              "details_json", "created_at")
_LINEAGE_COLS = ("parent_sha256", "child_sha256", "relation", "build_id", "proposal_name", "created_at", "child_kind",
                 "child_size")


def _ids_filter(build_ids: Sequence[str]) -> str:
    """`build_id IN (...)`, led by the range the ids span: DuckDB prunes row groups by a range, not by a list, and
    without the range it reads every column of the table for the list."""
    return f"build_id BETWEEN ? AND ? AND build_id IN ({', '.join('?' for _ in build_ids)})"


def _iso_sql(col: str) -> str:
    """SQL giving `col` (TIMESTAMPTZ) as Python's `datetime.isoformat()` of it in UTC: for listings of thousands
    of rows, formatting in the database beats converting each value to a datetime and back."""
    us = f"epoch_us({col})"
    return (f"(strftime(make_timestamp({us}), '%Y-%m-%dT%H:%M:%S') || CASE WHEN {us} % 1000000 = 0 THEN '' "
            f"ELSE '.' || lpad(CAST({us} % 1000000 AS VARCHAR), 6, '0') END || '+00:00')")


def _utc(epoch_us: int | None) -> datetime | None:
    """A timestamp read as `epoch_us(col)`: DuckDB's own TIMESTAMPTZ conversion costs microseconds per value
    (a time zone lookup each), which dominates queries that return thousands of rows."""
    return None if epoch_us is None else _EPOCH + timedelta(microseconds=epoch_us)


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


@dataclass(frozen=True)
class BuildRow:
    build_id: str
    proposal_name: str
    attempt_number: int
    parent_build_id: str | None
    run_id: str | None
    model: str | None
    endpoint: str | None
    packet_sha256: str | None
    status: str
    failure_kind: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float | None
    cost_usd: float | None
    skill_sha256: str | None
    test_sha256: str | None
    started_at: datetime
    finished_at: datetime | None
    spec_revision: int | None = None  # the revision of the spec this attempt was built from


_BUILD_COLS = (
    "build_id, proposal_name, attempt_number, parent_build_id, run_id, model, endpoint, packet_sha256, status, "
    "failure_kind, prompt_tokens, completion_tokens, latency_ms, cost_usd, skill_sha256, test_sha256, "
    "started_at, finished_at, spec_revision"
)


@dataclass(frozen=True)
class PromotionRow:
    seq: int
    proposal_name: str
    build_id: str
    from_status: str
    to_status: str
    approved_by: str
    source_sha256: str
    test_sha256: str | None
    skill_path: str
    prev_hash: str
    record_hash: str
    created_at: datetime
    # Schema 6: which version of the skill this promotion made, from which spec revision (hash and class).
    version: int | None = None
    spec_revision: int | None = None
    spec_sha256: str | None = None
    side_effect_class: str | None = None
    record_format: int = 1  # 1: hashed without the fields above (written before schema 6); 2: hashed with them

    def payload(self) -> dict[str, Any]:
        base = {
            "seq": self.seq,
            "proposal_name": self.proposal_name,
            "build_id": self.build_id,
            "from_status": self.from_status,
            "to_status": self.to_status,
            "approved_by": self.approved_by,
            "source_sha256": self.source_sha256,
            "test_sha256": self.test_sha256,
            "skill_path": self.skill_path,
            "prev_hash": self.prev_hash,
            "created_at": self.created_at.isoformat(),
        }
        if self.record_format >= 2:
            base.update(version=self.version, spec_revision=self.spec_revision, spec_sha256=self.spec_sha256,
                        side_effect_class=self.side_effect_class, record_format=self.record_format)
        return base


def promotion_hash(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class TrustedRecord:
    name: str
    side_effect_class: SideEffectClass
    required_secrets: tuple[str, ...]
    build_id: str
    source_sha256: str
    test_sha256: str | None
    skill_path: str
    approved_by: str
    promoted_at: datetime
    version: int = 1
    spec_revision: int | None = None
    promotion_seq: int = 0

    @property
    def ref(self) -> str:
        """NAME@VERSION: how a pinned version is named in `kavi run` and in chains."""
        return f"{self.name}@{self.version}"


# The statuses of a promoted version (`version_events`; a version without an event is TRUSTED).
VERSION_TRUSTED = "TRUSTED"
VERSION_REVOKED = "REVOKED"
VERSION_RETIRED = "RETIRED"
VERSION_SUSPECT = "SUSPECT"  # its re-verification failed (issue 17); served only under KAVI_SUSPECT_POLICY=allow


def served_statuses() -> str:
    """The version statuses `trusted_versions` serves, as SQL literals: SUSPECT too when the user allows it."""
    from kavi.settings import suspect_policy

    return "'TRUSTED', 'SUSPECT'" if suspect_policy() == "allow" else "'TRUSTED'"

_PROMOTION_COLS = (
    "seq, proposal_name, build_id, from_status, to_status, approved_by, source_sha256, test_sha256, skill_path, "
    "prev_hash, record_hash, created_at, version, spec_revision, spec_sha256, side_effect_class, record_format"
)
_PROMOTION_SELECT = _PROMOTION_COLS.replace("created_at", "epoch_us(created_at)")
# Each version's latest event (a version without one is TRUSTED).
_VERSION_STATUS = ("SELECT name, version, arg_max(status, created_at) AS status FROM version_events "
                   "GROUP BY name, version")


@dataclass(frozen=True)
class IndependentRow:
    """A request for an independent implementation of a proposal spec (schema 7): which model, why, what came of it.

    status: OK (a usable skill module, `source_sha256`), UNUSABLE (the answer could not be used) or LLM_ERROR."""

    independent_id: str
    proposal_name: str
    spec_sha256: str
    requested_by_build: str | None
    model: str
    choice_reason: str
    endpoint: str | None
    status: str
    reason: str | None
    source_sha256: str | None
    answer_sha256: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    created_at: str | None = None


def _promotion_row(r: Sequence[Any]) -> PromotionRow:
    # Read back in UTC, as it was hashed (utcnow()), whatever the session's time zone.
    return PromotionRow(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], _utc(r[11]) or _EPOCH,
                        r[12], r[13], r[14], r[15], int(r[16] or 1))


def new_build_id(name: str, attempt: int, spec_sha256: str = "", parent_build_id: str | None = None) -> str:
    """Deterministic for a given spec and history, so routing (seeded by the build id) replays exactly."""
    if not spec_sha256:
        return f"{name}-a{attempt}-{uuid.uuid4().hex[:8]}"
    digest = hashlib.sha256(f"{spec_sha256}:{attempt}:{parent_build_id or ''}".encode()).hexdigest()[:8]
    return f"{name}-a{attempt}-{digest}"


class ForgeRecords:
    """The forge's view of the ledger. Each method is one unit of work: one connection, one transaction."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def session(self) -> AbstractContextManager[None]:
        """Batch the calls of one step into one connection and one transaction (see `Ledger.session`)."""
        return self.ledger.session()

    # -- proposals -------------------------------------------------------------------------------
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
                self._event(con, proposal.name, None, ProposalStatus.PROPOSED, None, "proposed", actor, now)
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
                self._event(con, proposal.name, str(row[1]), ProposalStatus.PROPOSED, None,
                            f"spec revised: revision {revision} ({', '.join(d['field'] for d in diff)}){change}",
                            actor, now)
            con.execute("INSERT INTO proposal_revisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [proposal.name, revision, spec_json, spec_sha, new_class, previous,
                         json.dumps(diff, default=str), actor, source_path, now])
        change_pair = (previous, new_class) if previous is not None and previous != new_class else None
        return RevisionOutcome(proposal.name, revision, True, diff, change_pair)

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
        return ProposalRow(Proposal.model_validate_json(row[0]), row[1], ProposalStatus(row[2]), row[3], row[4],
                           row[5], int(row[6]), row[7])

    def require_proposal(self, name: str) -> ProposalRow:
        row = self.get_proposal(name)
        if row is None:
            raise LedgerRecordError(f"no proposal named {name!r} in the ledger; run `kavi propose FILE` first")
        return row

    def list_status(self, name: str | None = None) -> list[dict[str, Any]]:
        """One row per proposal (or only NAME's): status, attempts, latest build, its model and failure kind.

        Reads the proposals table alone: each row mirrors its latest build (schema 4), so the listing costs one
        row per proposal however many attempts the ledger holds.
        """
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
            self._set_status(con, name, to_status, build_id, reason, actor, now)

    def _set_status(
        self, con: duckdb.DuckDBPyConnection, name: str, to_status: ProposalStatus, build_id: str | None,
        reason: str, actor: str, now: datetime,
    ) -> None:
        row = con.execute("SELECT status FROM proposals WHERE name = ?", [name]).fetchone()
        if row is None:
            raise LedgerRecordError(f"no proposal named {name!r}")
        con.execute("UPDATE proposals SET status = ?, updated_at = ? WHERE name = ?", [to_status.value, now, name])
        self._event(con, name, str(row[0]), to_status, build_id, reason, actor, now)

    @staticmethod
    def _event(
        con: duckdb.DuckDBPyConnection, name: str, from_status: str | None, to_status: ProposalStatus,
        build_id: str | None, reason: str, actor: str, now: datetime,
    ) -> None:
        con.execute(
            "INSERT INTO status_events VALUES (?, ?, ?, ?, ?, ?, ?)",
            [name, from_status, to_status.value, build_id, reason, actor, now],
        )

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

    # -- builds ----------------------------------------------------------------------------------
    def builds(self, name: str) -> list[BuildRow]:
        with self.ledger.connect() as con:
            rows = con.execute(
                f"SELECT {_BUILD_COLS} FROM builds WHERE proposal_name = ? ORDER BY attempt_number", [name]
            ).fetchall()
        return [BuildRow(*r) for r in rows]

    def get_build(self, build_id: str) -> BuildRow | None:
        with self.ledger.connect() as con:
            row = con.execute(f"SELECT {_BUILD_COLS} FROM builds WHERE build_id = ?", [build_id]).fetchone()
        return BuildRow(*row) if row else None

    def latest_build(self, name: str) -> BuildRow | None:
        with self.ledger.connect() as con:
            row = con.execute(
                f"SELECT {_BUILD_COLS} FROM builds WHERE proposal_name = ? ORDER BY attempt_number DESC LIMIT 1",
                [name],
            ).fetchone()
        return BuildRow(*row) if row else None

    def build_for_run(self, name: str, run_id: str) -> BuildRow:
        with self.ledger.connect() as con:
            row = con.execute(
                f"SELECT {_BUILD_COLS} FROM builds WHERE proposal_name = ? AND run_id = ? "
                "ORDER BY attempt_number DESC LIMIT 1",
                [name, run_id],
            ).fetchone()
        if row is None:
            raise LedgerRecordError(
                f"no build of {name!r} was started in run {run_id}; materialize forge/build_packet first"
            )
        return BuildRow(*row)

    def start_build(
        self,
        name: str,
        *,
        run_id: str | None,
        model: str | None,
        endpoint: str | None,
        packet: ArtifactRef,
        build_id: str,
        attempt: int,
        parent_build_id: str | None,
        lineage_parent: str,
    ) -> None:
        """Record the frozen packet of a new attempt, its artifact and its lineage edge, in one transaction."""
        now = utcnow()
        with self.ledger.connect() as con:
            # Build ids and (proposal, attempt) are unique: the check is the ledger's, in the writing transaction.
            taken = con.execute(
                "SELECT build_id, attempt_number FROM builds WHERE build_id = ? "
                "OR (proposal_name = ? AND attempt_number = ?) LIMIT 1", [build_id, name, attempt]).fetchone()
            if taken is not None:
                raise LedgerConflictError(f"{name}: build {taken[0]} (attempt {taken[1]}) is already recorded; "
                                          f"attempt {attempt} cannot start again as {build_id}")
            # The attempt is built from the proposal's current revision (a later re-proposal cannot relabel it).
            rev = con.execute("SELECT coalesce(revision, 1) FROM proposals WHERE name = ?", [name]).fetchone()
            con.execute(
                "INSERT INTO builds (build_id, proposal_name, attempt_number, parent_build_id, run_id, model, "
                "endpoint, packet_sha256, status, started_at, spec_revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [build_id, name, attempt, parent_build_id, run_id, model, endpoint, packet.sha256, "PACKET", now,
                 int(rev[0]) if rev else None],
            )
            # The proposal row mirrors its latest attempt (schema 4): `kavi status` reads one row per proposal.
            con.execute(
                "UPDATE proposals SET attempts = ?, latest_build_id = ?, latest_model = ?, latest_failure_kind = NULL, "
                "latest_build_status = 'PACKET' WHERE name = ? AND coalesce(attempts, 0) <= ?",
                [attempt, build_id, model, name, attempt])
            self._artifact(con, packet, now)
            # The build row was inserted just now (its id checked above): it has no artifact rows yet.
            self._insert_new(con, "build_artifacts", ("build_id", "role"), ("build_id", "role", "sha256"),
                             [[build_id, "packet", packet.sha256]], absent=True)
            self._lineage(con, lineage_parent, packet, "packet_of", build_id, name, now)

    def finish_build(
        self,
        build_id: str,
        *,
        status: str,
        failure_kind: str | None,
        artifacts: Sequence[tuple[str, ArtifactRef, str, str]] = (),
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        latency_ms: float | None = None,
        cost_usd: float | None = None,
        skill_sha256: str | None = None,
        test_sha256: str | None = None,
    ) -> None:
        """Close a build step: its outcome, its artifacts (role, ref, lineage parent, relation), in one batch."""
        now = utcnow()
        with self.ledger.connect() as con:
            row = con.execute("SELECT proposal_name FROM builds WHERE build_id = ?", [build_id]).fetchone()
            if row is None:
                raise LedgerRecordError(f"no build {build_id}")
            con.execute(
                "UPDATE builds SET status = ?, failure_kind = ?, "
                "prompt_tokens = coalesce(?, prompt_tokens), completion_tokens = coalesce(?, completion_tokens), "
                "latency_ms = coalesce(?, latency_ms), cost_usd = coalesce(?, cost_usd), "
                "skill_sha256 = coalesce(?, skill_sha256), test_sha256 = coalesce(?, test_sha256), "
                "finished_at = ? WHERE build_id = ?",
                [status, failure_kind, prompt_tokens, completion_tokens, latency_ms, cost_usd, skill_sha256,
                 test_sha256, now, build_id],
            )
            con.execute("UPDATE proposals SET latest_failure_kind = ?, latest_build_status = ? "
                        "WHERE name = ? AND latest_build_id = ?", [failure_kind, status, row[0], build_id])
            if artifacts:  # a statement or two per table, however many artifacts the step produced
                self._insert_new(con, "artifacts", ("sha256",), _ARTIFACT_COLS,
                                 [[ref.sha256, ref.kind, ref.size, str(ref.path), now] for _, ref, _, _ in artifacts],
                                 newer_than=[ref.stored_at for _, ref, _, _ in artifacts])
                self._replace(con, "build_artifacts", ("build_id", "role"), ("build_id", "role", "sha256"),
                              [[build_id, role, ref.sha256] for role, ref, _, _ in artifacts])
                self._insert_new(con, "lineage", ("parent_sha256", "child_sha256", "relation"), _LINEAGE_COLS,
                                 [[parent, ref.sha256, relation, build_id, str(row[0]), now, ref.kind, ref.size]
                                  for _, ref, parent, relation in artifacts],
                                 newer_than=[ref.stored_at for _, ref, _, _ in artifacts])

    def artifacts_of_builds(self, build_ids: Sequence[str]) -> dict[str, dict[str, str]]:
        """`build_artifacts` of several builds in one query: build id -> role -> sha256."""
        out: dict[str, dict[str, str]] = {b: {} for b in build_ids}
        if not build_ids:
            return out
        with self.ledger.connect() as con:
            rows = con.execute(
                f"SELECT build_id, role, sha256 FROM build_artifacts WHERE {_ids_filter(build_ids)}",
                [min(build_ids), max(build_ids), *build_ids]).fetchall()
        for build_id, role, sha in rows:
            out[str(build_id)][str(role)] = str(sha)
        return out

    def build_artifacts(self, build_id: str) -> dict[str, str]:
        with self.ledger.connect() as con:
            rows = con.execute("SELECT role, sha256 FROM build_artifacts WHERE build_id = ?", [build_id]).fetchall()
        return {str(r[0]): str(r[1]) for r in rows}

    # -- gates -----------------------------------------------------------------------------------
    def record_gate_results(self, build_id: str, results: Iterable[GateResult]) -> None:
        now = utcnow()
        rows = [
            [build_id, r.gate, r.verdict.value, r.effective_verdict.value, r.reason, r.duration_s * 1000.0,
             json.dumps(r.messages), json.dumps(r.details, default=str), now]
            for r in results
        ]
        with self.ledger.connect() as con:
            self._replace(con, "gate_results", ("build_id", "gate"), _GATE_COLS, rows)

    def gate_verdicts(self, build_ids: Sequence[str]) -> dict[str, dict[str, str]]:
        """The effective verdict of every gate of several builds, in one query: build id -> gate -> verdict."""
        out: dict[str, dict[str, str]] = {b: {} for b in build_ids}
        if not build_ids:
            return out
        with self.ledger.connect() as con:
            rows = con.execute(
                f"SELECT build_id, gate, effective_verdict FROM gate_results WHERE {_ids_filter(build_ids)} "
                "ORDER BY created_at, gate", [min(build_ids), max(build_ids), *build_ids]).fetchall()
        for build_id, gate, verdict in rows:
            out[str(build_id)][str(gate)] = str(verdict)
        return out

    def gate_results(self, build_id: str) -> list[dict[str, Any]]:
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT gate, verdict, effective_verdict, reason, duration_ms, messages_json, details_json "
                "FROM gate_results WHERE build_id = ? ORDER BY created_at, gate",
                [build_id],
            ).fetchall()
        return [
            {"gate": r[0], "verdict": r[1], "effective_verdict": r[2], "reason": r[3], "duration_ms": r[4],
             "messages": json.loads(r[5]), "details": json.loads(r[6])}
            for r in rows
        ]

    # -- research --------------------------------------------------------------------------------
    def record_research(
        self,
        *,
        build_id: str,
        name: str,
        attempt: int,
        failure_kind: str,
        fingerprint: str,
        facts: dict[str, Any],
        triggers: list[str],
        advice: str | None,
        escalated: bool,
        note: ArtifactRef,
        lineage_parent: str | None,
    ) -> None:
        now = utcnow()
        with self.ledger.connect() as con:
            con.execute("DELETE FROM research_notes WHERE build_id = ?", [build_id])  # one note per build
            con.execute(
                "INSERT INTO research_notes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [build_id, name, attempt, failure_kind, fingerprint, json.dumps(facts, default=str),
                 json.dumps(triggers), advice, escalated, note.sha256, now],
            )
            self._artifact(con, note, now)
            self._replace(con, "build_artifacts", ("build_id", "role"), ("build_id", "role", "sha256"),
                          [[build_id, "research", note.sha256]])
            if lineage_parent:
                self._lineage(con, lineage_parent, note, "research_of", build_id, name, now)

    def research_notes(self, name: str) -> list[dict[str, Any]]:
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT build_id, attempt_number, failure_kind, fingerprint, facts_json, triggers_json, advice, "
                "escalated, note_sha256, created_at FROM research_notes WHERE proposal_name = ? "
                "ORDER BY attempt_number",
                [name],
            ).fetchall()
        return [
            {"build_id": r[0], "attempt": r[1], "failure_kind": r[2], "fingerprint": r[3],
             "facts": json.loads(r[4]), "triggers": json.loads(r[5]), "advice": r[6], "escalated": r[7],
             "note_sha256": r[8], "created_at": r[9].isoformat()}
            for r in rows
        ]

    # -- models set aside ------------------------------------------------------------------------
    def set_model_aside(self, config_fingerprint: str, model: str, reason: str, build_id: str | None) -> None:
        """A model that answered "not found" or "unauthorised" stays aside until the configuration changes."""
        with self.ledger.connect() as con:
            verb = "INSERT OR REPLACE INTO"
            if self.ledger.lake is not None:  # the shared ledger has no key for OR REPLACE: the key's row goes first
                con.execute("DELETE FROM model_set_aside WHERE config_fingerprint = ? AND model = ?",
                            [config_fingerprint, model])
                verb = "INSERT INTO"
            con.execute(
                f"{verb} model_set_aside VALUES (?, ?, ?, ?, ?)",
                [config_fingerprint, model, reason, build_id, utcnow()],
            )

    def models_set_aside(self, config_fingerprint: str) -> dict[str, str]:
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT model, reason FROM model_set_aside WHERE config_fingerprint = ?", [config_fingerprint]
            ).fetchall()
        return {str(r[0]): str(r[1]) for r in rows}

    # -- retry requests --------------------------------------------------------------------------
    def record_retry_request(self, name: str, requested_by: str, hint: str | None) -> None:
        with self.ledger.connect() as con:
            con.execute("INSERT INTO retry_requests VALUES (?, ?, ?, NULL, ?)", [name, requested_by, hint, utcnow()])

    def take_retry_hints(self, name: str, build_id: str) -> list[dict[str, Any]]:
        """Hints not yet carried by a packet; marks them as carried by `build_id`."""
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT requested_by, hint, created_at FROM retry_requests "
                "WHERE proposal_name = ? AND consumed_by_build IS NULL ORDER BY created_at",
                [name],
            ).fetchall()
            con.execute(
                "UPDATE retry_requests SET consumed_by_build = ? WHERE proposal_name = ? AND consumed_by_build IS NULL",
                [build_id, name],
            )
        return [{"by": r[0], "hint": r[1], "at": r[2].isoformat()} for r in rows]

    def research_notes_since(self, since: datetime | None) -> list[dict[str, Any]]:
        """Notes at or after `since` (inclusive: callers dedupe by run key), oldest first."""
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT n.build_id, n.proposal_name, n.attempt_number, n.failure_kind, n.escalated, n.triggers_json, "
                "n.created_at, p.status, (SELECT max(attempt_number) FROM builds b WHERE b.proposal_name = "
                "n.proposal_name) FROM research_notes n JOIN proposals p ON p.name = n.proposal_name "
                "WHERE ? IS NULL OR n.created_at >= ? ORDER BY n.created_at",
                [since, since],
            ).fetchall()
        return [
            {"build_id": r[0], "name": r[1], "attempt": r[2], "failure_kind": r[3], "escalated": r[4],
             "triggers": json.loads(r[5]), "created_at": r[6], "status": r[7], "latest_attempt": r[8]}
            for r in rows
        ]

    def pending_promotions(self) -> list[tuple[str, str]]:
        """(proposal, build) pairs whose latest verified build has an approval but no promotion yet."""
        with self.ledger.connect() as con:
            rows = con.execute(
                """
                SELECT DISTINCT a.proposal_name, a.build_id FROM approvals a
                JOIN builds b ON b.build_id = a.build_id AND b.status = 'VERIFIED'
                WHERE b.attempt_number = (
                    SELECT max(attempt_number) FROM builds x WHERE x.proposal_name = b.proposal_name)
                  AND NOT EXISTS (SELECT 1 FROM promotions p WHERE p.build_id = a.build_id)
                ORDER BY a.proposal_name
                """
            ).fetchall()
        return [(str(r[0]), str(r[1])) for r in rows]

    def latest_outcome_at(self) -> tuple[int, datetime | None]:
        with self.ledger.connect() as con:
            row = con.execute("SELECT count(*), max(created_at) FROM model_outcomes").fetchone()
        return (int(row[0]), row[1]) if row else (0, None)

    # -- approvals and promotions ----------------------------------------------------------------
    def record_approval(self, name: str, build_id: str, approved_by: str, policy: str | None = None
                        ) -> dict[str, Any] | None:
        """Record the approval of a build, unless it has one already: the first approval of a build is the one
        that counts (two people approving at once do not both get recorded). Returns that earlier approval, or
        None when this one was recorded. The check and the insert are one transaction."""
        with self.ledger.connect() as con:
            earlier = self._first_approval(con, build_id)
            if earlier is not None:
                return earlier
            con.execute("INSERT INTO approvals VALUES (?, ?, ?, ?, ?)", [name, build_id, approved_by, policy, utcnow()])
        return None

    @staticmethod
    def _first_approval(con: duckdb.DuckDBPyConnection, build_id: str) -> dict[str, Any] | None:
        row = con.execute(
            "SELECT approved_by, policy, created_at FROM approvals WHERE build_id = ? ORDER BY created_at LIMIT 1",
            [build_id],
        ).fetchone()
        if row is None:
            return None
        return {"approved_by": row[0], "policy": row[1], "at": row[2].isoformat()}

    def approval_for(self, name: str, build_id: str) -> dict[str, Any] | None:
        """The approval that counts for a build: its first."""
        with self.ledger.connect() as con:
            return self._first_approval(con, build_id)

    def record_promotion(
        self,
        *,
        name: str,
        build_id: str,
        from_status: ProposalStatus,
        approved_by: str,
        source_sha256: str,
        test_sha256: str | None,
        skill_path: str,
        version: int | None = None,
    ) -> PromotionRow:
        """Append a hash-chained promotion record — the next version of NAME — and mark the proposal TRUSTED,
        atomically. A build is promoted once: a second promotion of it raises LedgerConflictError naming the
        first. `version`, when given, must be the next version (the caller named its file after it)."""
        now = utcnow()
        with self.ledger.connect() as con:
            done = con.execute(f"SELECT {_PROMOTION_SELECT} FROM promotions WHERE build_id = ? ORDER BY seq LIMIT 1",
                               [build_id]).fetchone()
            if done is not None:
                first = _promotion_row(done)
                raise LedgerConflictError(
                    f"{name}: build {build_id} is already trusted as {name}@{first.version} (promotion #{first.seq}, "
                    f"approved by {first.approved_by})")
            nxt = self._next_version(con, name)
            if version is not None and version != nxt:
                raise LedgerConflictError(f"{name}: version {version} cannot be promoted; the next version is {nxt}")
            rev_row = con.execute("SELECT spec_revision FROM builds WHERE build_id = ?", [build_id]).fetchone()
            cur = con.execute("SELECT coalesce(revision, 1), spec_sha256, side_effect_class FROM proposals "
                              "WHERE name = ?", [name]).fetchone()
            if cur is None:
                raise LedgerRecordError(f"no proposal named {name!r}")
            revision = int(rev_row[0]) if rev_row and rev_row[0] is not None else int(cur[0])
            spec = con.execute("SELECT spec_sha256, side_effect_class FROM proposal_revisions WHERE name = ? AND "
                               "revision = ? LIMIT 1", [name, revision]).fetchone()
            spec_sha, side = (str(spec[0]), str(spec[1])) if spec else (str(cur[1]), str(cur[2]))
            last = con.execute("SELECT seq, record_hash FROM promotions ORDER BY seq DESC LIMIT 1").fetchone()
            seq = int(last[0]) + 1 if last else 1
            prev = str(last[1]) if last else GENESIS_HASH
            draft = PromotionRow(seq, name, build_id, from_status.value, ProposalStatus.TRUSTED.value, approved_by,
                                 source_sha256, test_sha256, skill_path, prev, "", now, nxt, revision, spec_sha, side,
                                 2)
            digest = promotion_hash(draft.payload())
            con.execute(
                f"INSERT INTO promotions ({_PROMOTION_COLS}) VALUES ({', '.join('?' for _ in range(17))})",
                [seq, name, build_id, from_status.value, ProposalStatus.TRUSTED.value, approved_by, source_sha256,
                 test_sha256, skill_path, prev, digest, now, nxt, revision, spec_sha, side, 2],
            )
            con.execute("UPDATE proposals SET trusted_version = ? WHERE name = ?", [nxt, name])
            self._set_status(con, name, ProposalStatus.TRUSTED, build_id,
                             f"promoted as {name}@{nxt}, approved by {approved_by}", approved_by, now)
        return PromotionRow(seq, name, build_id, from_status.value, ProposalStatus.TRUSTED.value, approved_by,
                            source_sha256, test_sha256, skill_path, prev, digest, now, nxt, revision, spec_sha, side, 2)

    @staticmethod
    def _next_version(con: duckdb.DuckDBPyConnection, name: str) -> int:
        row = con.execute("SELECT coalesce(max(version), 0) FROM promotions WHERE proposal_name = ?",
                          [name]).fetchone()
        return (int(row[0]) if row else 0) + 1

    def next_version(self, name: str) -> int:
        """The version number NAME's next promotion will get."""
        with self.ledger.connect() as con:
            return self._next_version(con, name)

    def promotion_for_build(self, build_id: str) -> PromotionRow | None:
        """The promotion that made a build a trusted version, if any."""
        with self.ledger.connect() as con:
            row = con.execute(f"SELECT {_PROMOTION_SELECT} FROM promotions WHERE build_id = ? ORDER BY seq LIMIT 1",
                              [build_id]).fetchone()
        return _promotion_row(row) if row else None

    def promotions(self, name: str | None = None) -> list[PromotionRow]:
        """Every promotion in chain order, or only NAME's."""
        with self.ledger.connect() as con:
            rows = con.execute(
                f"SELECT {_PROMOTION_SELECT} FROM promotions "
                + ("WHERE proposal_name = ? " if name is not None else "") + "ORDER BY seq",
                [name] if name is not None else None,
            ).fetchall()
        return [_promotion_row(r) for r in rows]

    def verify_promotion_chain(self) -> list[str]:
        """Problems with the hash chain of promotions: an edited, deleted or reordered record breaks it; so does a
        version number that is not its promotion's rank among the skill's promotions."""
        problems: list[str] = []
        prev = GENESIS_HASH
        expected_seq = 1
        versions: dict[str, int] = {}
        for row in self.promotions():
            if row.seq != expected_seq:
                problems.append(f"promotion #{expected_seq} is missing (next record is #{row.seq})")
            if row.prev_hash != prev:
                problems.append(f"promotion #{row.seq} ({row.proposal_name}) does not link to the record before it")
            if promotion_hash(row.payload()) != row.record_hash:
                problems.append(f"promotion #{row.seq} ({row.proposal_name}) was edited: its hash does not match")
            versions[row.proposal_name] = versions.get(row.proposal_name, 0) + 1
            if row.version != versions[row.proposal_name]:
                problems.append(f"promotion #{row.seq} ({row.proposal_name}) claims version {row.version}, but it is "
                                f"the skill's promotion number {versions[row.proposal_name]}")
            prev = row.record_hash
            expected_seq = row.seq + 1
        return problems

    def registry_mark(self) -> tuple[int, int]:
        """(last promotion sequence number, number of trusted versions): it changes whenever the set of trusted
        versions or any entry of it changes (a promotion adds a sequence number; a revocation lowers the count),
        so the registry projection is regenerated when, and only when, the mark moved."""
        with self.ledger.connect() as con:
            seq = con.execute("SELECT coalesce(max(seq), 0) FROM promotions").fetchone()
            count = con.execute(
                f"SELECT count(*) FROM promotions p LEFT JOIN ({_VERSION_STATUS}) e "
                "ON e.name = p.proposal_name AND e.version = p.version WHERE coalesce(e.status, 'TRUSTED') IN "
                f"({served_statuses()})"
            ).fetchone()
        return (int(seq[0]) if seq else 0, int(count[0]) if count else 0)

    def trusted_versions(self, name: str | None = None) -> list[TrustedRecord]:
        """Every trusted version (of every skill, or of NAME), by name then version. A version stays trusted
        whatever later attempts of its proposal do, until an event (a revocation) says otherwise."""
        only = "AND p.proposal_name = $name" if name is not None else ""
        with self.ledger.connect() as con:
            rows = con.execute(
                f"""
                SELECT p.proposal_name, coalesce(p.side_effect_class, pr.side_effect_class),
                       coalesce(CAST(json_extract(coalesce(r.spec_json, pr.spec_json), '$.required_secrets')
                                     AS VARCHAR[]), []),
                       p.build_id, p.source_sha256, p.test_sha256, p.skill_path, p.approved_by,
                       epoch_us(p.created_at), p.version, p.spec_revision, p.seq
                FROM promotions p
                JOIN proposals pr ON pr.name = p.proposal_name
                LEFT JOIN proposal_revisions r ON r.name = p.proposal_name AND r.revision = p.spec_revision
                LEFT JOIN ({_VERSION_STATUS}) e ON e.name = p.proposal_name AND e.version = p.version
                WHERE coalesce(e.status, 'TRUSTED') IN ({served_statuses()}) {only}
                ORDER BY p.proposal_name, p.version
                """,
                {"name": name} if name is not None else None,
            ).fetchall()
        # The spec was validated when it was recorded: the database reads its declared secrets (a model validation
        # per trusted skill made every promotion pay for the size of the registry).
        classes = {c.value: c for c in SideEffectClass}
        return [TrustedRecord(r[0], classes[r[1]], tuple(r[2]), r[3], r[4], r[5], r[6], r[7], _utc(r[8]) or _EPOCH,
                              int(r[9]), r[10], int(r[11])) for r in rows]

    def trusted(self, name: str | None = None) -> list[TrustedRecord]:
        """The latest trusted version of every skill (or of NAME only): what `kavi run NAME` runs."""
        latest: dict[str, TrustedRecord] = {}
        for t in self.trusted_versions(name):
            latest[t.name] = t  # ordered by version: the last one is the latest
        return list(latest.values())

    def trusted_version(self, name: str, version: int) -> TrustedRecord | None:
        return next((t for t in self.trusted_versions(name) if t.version == version), None)

    def version_status(self, name: str, version: int) -> tuple[str, str | None]:
        """(status, reason) of a promoted version: TRUSTED unless an event changed it; ('', None) if never promoted."""
        with self.ledger.connect() as con:
            exists = con.execute("SELECT 1 FROM promotions WHERE proposal_name = ? AND version = ?",
                                 [name, version]).fetchone()
            if exists is None:
                return "", None
            row = con.execute("SELECT status, reason FROM version_events WHERE name = ? AND version = ? "
                              "ORDER BY created_at DESC LIMIT 1", [name, version]).fetchone()
        return (str(row[0]), str(row[1])) if row else (VERSION_TRUSTED, None)

    def revoke_version(self, name: str, version: int, *, reason: str, actor: str) -> None:
        """Stop trusting one version (recorded, with who and why); the skill's other versions are untouched."""
        now = utcnow()
        with self.ledger.connect() as con:
            if con.execute("SELECT 1 FROM promotions WHERE proposal_name = ? AND version = ?",
                           [name, version]).fetchone() is None:
                raise LedgerRecordError(f"{name}@{version} was never promoted")
            con.execute("INSERT INTO version_events VALUES (?, ?, ?, ?, ?, ?)",
                        [name, version, VERSION_REVOKED, reason, actor, now])
            con.execute(
                f"UPDATE proposals SET trusted_version = (SELECT max(p.version) FROM promotions p LEFT JOIN "
                f"({_VERSION_STATUS}) e ON e.name = p.proposal_name AND e.version = p.version WHERE p.proposal_name = "
                "? AND coalesce(e.status, 'TRUSTED') = 'TRUSTED') WHERE name = ?", [name, name])

    def promoted_paths(self) -> set[str]:
        """Every skill path a promotion ever wrote (trusted or not any more): the files the skills folder may hold."""
        with self.ledger.connect() as con:
            rows = con.execute("SELECT DISTINCT skill_path FROM promotions").fetchall()
        return {str(r[0]) for r in rows}

    # -- model outcomes --------------------------------------------------------------------------
    def record_model_outcome(
        self, *, build_id: str, name: str, model: str, task_type: str, success: bool, failure_kind: str | None,
        latency_ms: float | None, tokens: int | None, cost_usd: float | None,
    ) -> None:
        with self.ledger.connect() as con:
            con.execute("DELETE FROM model_outcomes WHERE build_id = ?", [build_id])  # one outcome per build
            con.execute(
                "INSERT INTO model_outcomes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [build_id, name, model, task_type, success, failure_kind, latency_ms, tokens, cost_usd, utcnow()],
            )

    def model_outcomes(self) -> list[dict[str, Any]]:
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT build_id, proposal_name, model, task_type, success, failure_kind, latency_ms, tokens, "
                f"cost_usd, {_iso_sql('created_at')} FROM model_outcomes ORDER BY created_at"
            ).fetchall()
        return [
            {"build_id": r[0], "proposal_name": r[1], "model": r[2], "task_type": r[3], "success": r[4],
             "failure_kind": r[5], "latency_ms": r[6], "tokens": r[7], "cost_usd": r[8], "created_at": r[9]}
            for r in rows
        ]

    def outcome_summary(self) -> list[tuple[str, str, int, int, float, int, float, int]]:
        """Per (model, task type), summed by the database: successes, failures, the sum and number of non-zero
        latencies, the sum and number of costs. The learner reads these few rows, not every outcome."""
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT model, task_type, count(*) FILTER (WHERE success), count(*) FILTER (WHERE NOT success), "
                "coalesce(sum(latency_ms) FILTER (WHERE latency_ms <> 0), 0), "
                "count(latency_ms) FILTER (WHERE latency_ms <> 0), coalesce(sum(cost_usd), 0), count(cost_usd) "
                "FROM model_outcomes GROUP BY model, task_type ORDER BY min(created_at), model, task_type"
            ).fetchall()
        return [(str(r[0]), str(r[1]), int(r[2]), int(r[3]), float(r[4]), int(r[5]), float(r[6]), int(r[7]))
                for r in rows]

    def outcome_counts(self, task_type: str, as_of: datetime | None = None) -> dict[str, tuple[int, int, float | None]]:
        """Per model, for one task type: (successes, failures, mean cost of the outcomes that have one).

        What routing needs before an attempt, summed by the database: the attempt reads a few rows, not every
        outcome ever recorded. With `as_of`, only the outcomes recorded up to then (a batch's runs, see
        kavi/forge/batch.py).
        """
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT model, count(*) FILTER (WHERE success), count(*) FILTER (WHERE NOT success), "
                "sum(cost_usd), count(cost_usd) FROM model_outcomes WHERE task_type = ? "
                + ("AND created_at <= ? " if as_of is not None else "") + "GROUP BY model ORDER BY model",
                [task_type, *([as_of] if as_of is not None else [])],
            ).fetchall()
        return {str(r[0]): (int(r[1]), int(r[2]), float(r[3]) / int(r[4]) if r[4] else None) for r in rows}

    # -- independent implementations (schema 7) -------------------------------------------------
    def record_independent(self, row: "IndependentRow", *, artifacts: Sequence[tuple[ArtifactRef, str, str]] = ()
                           ) -> None:
        """One model call for an independent implementation, with its artifacts (ref, lineage parent, relation)."""
        now = utcnow()
        with self.ledger.connect() as con:
            con.execute(
                "INSERT INTO independents (independent_id, proposal_name, spec_sha256, requested_by_build, model, "
                "choice_reason, endpoint, status, reason, source_sha256, answer_sha256, prompt_tokens, "
                "completion_tokens, latency_ms, cost_usd, created_at) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [row.independent_id, row.proposal_name, row.spec_sha256, row.requested_by_build, row.model,
                 row.choice_reason, row.endpoint, row.status, row.reason, row.source_sha256, row.answer_sha256,
                 row.prompt_tokens, row.completion_tokens, row.latency_ms, row.cost_usd, now])
            for ref, parent, relation in artifacts:
                self._artifact(con, ref, now)
                self._lineage(con, parent, ref, relation, row.requested_by_build, row.proposal_name, now)

    def independents(self, name: str, spec_sha256: str | None = None) -> list["IndependentRow"]:
        """NAME's independent implementation requests (of one spec, when given), oldest first."""
        where, params = "proposal_name = ?", [name]
        if spec_sha256 is not None:
            where += " AND spec_sha256 = ?"
            params.append(spec_sha256)
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT independent_id, proposal_name, spec_sha256, requested_by_build, model, choice_reason, "
                "endpoint, status, reason, source_sha256, answer_sha256, prompt_tokens, completion_tokens, latency_ms, "
                f"cost_usd, {_iso_sql('created_at')} FROM independents WHERE {where} ORDER BY created_at",
                params).fetchall()
        return [IndependentRow(*r) for r in rows]

    # -- artifacts and lineage -------------------------------------------------------------------
    def record_artifact(self, ref: ArtifactRef) -> None:
        with self.ledger.connect() as con:
            self._artifact(con, ref, utcnow())

    # The tables that grow with every attempt have no key in the database (see schema migration 3): these keep
    # their keys unique. The ledger has one writing process at a time, and each step writes in one transaction.

    @staticmethod
    def _insert_new(con: duckdb.DuckDBPyConnection, table: str, key: Sequence[str], cols: Sequence[str],
                    rows: Sequence[Sequence[Any]], newer_than: Sequence[datetime | None] | None = None,
                    absent: bool = False) -> None:
        """INSERT OR IGNORE: the rows whose key is neither in the table nor earlier in `rows`.

        `newer_than[i]`, when set, says any row with row i's key was created after that time (its artifact was
        stored then): the lookup reads only the rows created since, which DuckDB finds by the row groups'
        time ranges instead of scanning the table. With `absent` the caller knows no key can be there yet.
        """
        at = [cols.index(k) for k in key]
        seen: set[tuple[Any, ...]] = set()
        groups: dict[datetime | None, list[Sequence[Any]]] = {}
        for i, r in enumerate(rows):
            k = tuple(r[j] for j in at)
            if k not in seen:
                seen.add(k)
                groups.setdefault(newer_than[i] if newer_than is not None else None, []).append(r)
        row_sql = "(" + ", ".join("?" for _ in cols) + ")"
        same = " AND ".join(f"t.{k} = v.{k}" for k in key)
        for since, group in groups.items():  # one statement per distinct bound (usually one)
            values = ", ".join(row_sql for _ in group)
            params = [x for r in group for x in r]
            if absent:
                con.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES {values}", params)
                continue
            recent = " AND t.created_at >= ?" if since is not None else ""
            con.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT * FROM (VALUES {values}) "
                        f"v({', '.join(cols)}) WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE {same}{recent})",
                        params + ([since] if since is not None else []))

    @staticmethod
    def _replace(con: duckdb.DuckDBPyConnection, table: str, key: Sequence[str], cols: Sequence[str],
                 rows: Sequence[Sequence[Any]]) -> None:
        """INSERT OR REPLACE: the rows' keys are deleted, then the rows inserted (the last row of a key wins)."""
        at = [cols.index(k) for k in key]
        last = {tuple(r[i] for i in at): r for r in rows}
        if not last:
            return
        match = " OR ".join("(" + " AND ".join(f"{k} = ?" for k in key) + ")" for _ in last)
        con.execute(f"DELETE FROM {table} WHERE {match}", [x for k in last for x in k])
        values = ", ".join("(" + ", ".join("?" for _ in cols) + ")" for _ in last)
        con.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES {values}", [x for r in last.values() for x in r])

    @classmethod
    def _artifact(cls, con: duckdb.DuckDBPyConnection, ref: ArtifactRef, now: datetime) -> None:
        cls._insert_new(con, "artifacts", ("sha256",), _ARTIFACT_COLS,
                        [[ref.sha256, ref.kind, ref.size, str(ref.path), now]], newer_than=[ref.stored_at])

    @classmethod
    def _lineage(
        cls, con: duckdb.DuckDBPyConnection, parent: str, child: ArtifactRef, relation: str, build_id: str | None,
        name: str | None, now: datetime,
    ) -> None:
        """An edge parent → child, with the child's kind and size; an edge already recorded is kept as it was."""
        cls._insert_new(con, "lineage", ("parent_sha256", "child_sha256", "relation"), _LINEAGE_COLS,
                        [[parent, child.sha256, relation, build_id, name, now, child.kind, child.size]],
                        newer_than=[child.stored_at])

    def lineage_edges(self, name: str) -> list[dict[str, Any]]:
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT parent_sha256, child_sha256, relation, build_id, child_kind, child_size "
                "FROM lineage WHERE proposal_name = ? ORDER BY created_at",
                [name],
            ).fetchall()
        return [
            {"parent": r[0], "child": r[1], "relation": r[2], "build_id": r[3], "kind": r[4], "size": r[5]}
            for r in rows
        ]
