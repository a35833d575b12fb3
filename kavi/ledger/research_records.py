"""What the forge learns from failed attempts: research notes, retry requests and models set aside."""

import json
from datetime import datetime
from typing import Any

from kavi.ledger.artifacts import ArtifactRef
from kavi.ledger.record_base import RecordsBase, _artifact, _lineage, _replace
from kavi.ledger.store import utcnow


class ResearchRecords(RecordsBase):
    """Research notes, retry requests and models set aside."""

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
            _artifact(con, note, now)
            _replace(con, "build_artifacts", ("build_id", "role"), ("build_id", "role", "sha256"),
                     [[build_id, "research", note.sha256]])
            if lineage_parent:
                _lineage(con, lineage_parent, note, "research_of", build_id, name, now)

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
