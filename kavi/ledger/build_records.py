"""Builds (the attempts at a proposal), the artifacts each produced and the verdicts of their gates."""

import hashlib
import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kavi.ledger.artifacts import ArtifactRef
from kavi.ledger.record_base import (
    LedgerConflictError,
    LedgerRecordError,
    RecordsBase,
    _artifact,
    _artifacts_with_lineage,
    _ids_filter,
    _insert_new,
    _lineage,
    _replace,
)
from kavi.ledger.store import utcnow
from kavi.verdicts import GateResult

_GATE_COLS = ("build_id", "gate", "verdict", "effective_verdict", "reason", "duration_ms", "messages_json",
              "details_json", "created_at")


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


def new_build_id(name: str, attempt: int, spec_sha256: str = "", parent_build_id: str | None = None) -> str:
    """Deterministic for a given spec and history, so routing (seeded by the build id) replays exactly."""
    if not spec_sha256:
        return f"{name}-a{attempt}-{uuid.uuid4().hex[:8]}"
    digest = hashlib.sha256(f"{spec_sha256}:{attempt}:{parent_build_id or ''}".encode()).hexdigest()[:8]
    return f"{name}-a{attempt}-{digest}"


class BuildRecords(RecordsBase):
    """Builds, their artifacts and their gate results."""

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
            _artifact(con, packet, now)
            # The build row was inserted just now (its id checked above): it has no artifact rows yet.
            _insert_new(con, "build_artifacts", ("build_id", "role"), ("build_id", "role", "sha256"),
                        [[build_id, "packet", packet.sha256]], absent=True)
            _lineage(con, lineage_parent, packet, "packet_of", build_id, name, now)

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
            # One statement per table, however many artifacts the step produced.
            _artifacts_with_lineage(con, [(ref, parent, relation) for _, ref, parent, relation in artifacts],
                                    build_id, str(row[0]), now)
            if artifacts:
                _replace(con, "build_artifacts", ("build_id", "role"), ("build_id", "role", "sha256"),
                         [[build_id, role, ref.sha256] for role, ref, _, _ in artifacts])

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
            _replace(con, "gate_results", ("build_id", "gate"), _GATE_COLS, rows)

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
