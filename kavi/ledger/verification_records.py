"""Ledger records of re-verification and provenance (schema 12 and 13): verifications with the fingerprint that
judged them, SUSPECT and
reinstated versions, model calls outside builds, and promotion attestations. Kept beside `records.py` so the forge's
main record class stays as it is; both write the same ledger through short-lived connections."""

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kavi.ledger.record_base import _utc
from kavi.ledger.records import VERSION_SUSPECT, VERSION_TRUSTED, LedgerRecordError
from kavi.ledger.store import Ledger, utcnow

# Bounds of what a person writes into the ledger when reinstating a version.
MAX_ACTOR = 200
MAX_REASON = 2000


@dataclass(frozen=True)
class VerificationRow:
    verification_id: str
    build_id: str
    proposal_name: str
    version: int | None
    kind: str  # "forge" (the attempt's own verification) or "reverify"
    fingerprint: str
    passed: bool
    failing: list[dict[str, str]]
    report_sha256: str | None
    duration_s: float | None
    actor: str | None
    created_at: str


@dataclass(frozen=True)
class VersionEvent:
    name: str
    version: int
    status: str
    reason: str
    actor: str
    created_at: str

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


_VERIFICATION_COLS = ("verification_id, build_id, proposal_name, version, kind, fingerprint, passed, failing_json, "
                      "report_sha256, duration_s, actor, epoch_us(created_at)")


def _verification(r: Sequence[Any]) -> VerificationRow:
    created = _utc(r[11])
    return VerificationRow(r[0], r[1], r[2], None if r[3] is None else int(r[3]), r[4], r[5], bool(r[6]),
                           json.loads(r[7]), r[8], r[9], r[10], created.isoformat() if created else "")


class VerificationRecords:
    """Each method is one unit of work (one connection), or joins the caller's `Ledger.session()`."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    # -- fingerprints and verifications ------------------------------------------------------------
    def record_fingerprint(self, digest: str, parts: dict[str, Any]) -> None:
        with self.ledger.connect() as con:
            if con.execute("SELECT 1 FROM judge_fingerprints WHERE digest = ? LIMIT 1", [digest]).fetchone():
                return
            con.execute("INSERT INTO judge_fingerprints VALUES (?, ?, ?)",
                        [digest, json.dumps(parts, sort_keys=True, default=str), utcnow()])

    def fingerprint_parts(self, digest: str) -> dict[str, Any] | None:
        with self.ledger.connect() as con:
            row = con.execute("SELECT fingerprint_json FROM judge_fingerprints WHERE digest = ? LIMIT 1",
                              [digest]).fetchone()
        if row is None:
            return None
        parts: dict[str, Any] = json.loads(row[0])
        return parts

    def record_verification(self, *, build_id: str, name: str, version: int | None, kind: str, fingerprint: str,
                            passed: bool, failing: list[dict[str, str]], report_sha256: str | None,
                            duration_s: float | None, actor: str | None) -> str:
        vid = f"ver-{uuid.uuid4().hex[:16]}"
        with self.ledger.connect() as con:
            con.execute("INSERT INTO verifications VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [vid, build_id, name, version, kind, fingerprint, passed, json.dumps(failing), report_sha256,
                         duration_s, actor, utcnow()])
        return vid

    def verifications(self, name: str | None = None) -> list[VerificationRow]:
        """Every verification (of NAME), oldest first: the forge's and each re-verification, side by side."""
        with self.ledger.connect() as con:
            rows = con.execute(
                f"SELECT {_VERIFICATION_COLS} FROM verifications "
                + ("WHERE proposal_name = ? " if name is not None else "") + "ORDER BY created_at",
                [name] if name is not None else None).fetchall()
        return [_verification(r) for r in rows]

    def latest_verification_of_builds(self, build_ids: Sequence[str]) -> dict[str, VerificationRow]:
        """Each build's latest verification (forge or re-verification)."""
        if not build_ids:
            return {}
        with self.ledger.connect() as con:
            rows = con.execute(
                f"SELECT {_VERIFICATION_COLS} FROM verifications WHERE build_id IN "
                f"({', '.join('?' for _ in build_ids)}) "
                "QUALIFY row_number() OVER (PARTITION BY build_id ORDER BY created_at DESC) = 1",
                list(build_ids)).fetchall()
        return {r[1]: _verification(r) for r in rows}

    # -- version events: SUSPECT and reinstatement -------------------------------------------------
    def mark_suspect(self, name: str, version: int, *, reason: str, actor: str) -> bool:
        """Mark a TRUSTED version SUSPECT (False when it is not TRUSTED now: nothing is recorded)."""
        with self.ledger.connect() as con:
            status = self._status(con, name, version)
            if status != VERSION_TRUSTED:
                return False
            con.execute("INSERT INTO version_events VALUES (?, ?, ?, ?, ?, ?)",
                        [name, version, VERSION_SUSPECT, reason[:MAX_REASON], actor[:MAX_ACTOR], utcnow()])
        return True

    def reinstate(self, name: str, version: int, *, by: str, reason: str) -> VersionEvent:
        """A person's decision that a SUSPECT version is trusted again, recorded with who and why."""
        who, why = by.strip(), reason.strip()
        if not who or len(who) > MAX_ACTOR or any(ord(c) < 32 for c in who):
            raise ValueError(f"--by must name a person in 1 to {MAX_ACTOR} printable characters")
        if not why or len(why) > MAX_REASON:
            raise ValueError(f"--reason must say why, in 1 to {MAX_REASON} characters")
        now = utcnow()
        with self.ledger.connect() as con:
            status = self._status(con, name, version)
            if status is None:
                raise LedgerRecordError(f"{name}@{version} was never promoted")
            if status != VERSION_SUSPECT:
                raise LedgerRecordError(f"{name}@{version} is {status}, not SUSPECT: only a SUSPECT version is "
                                        "reinstated")
            text = f"reinstated by {who}: {why}"
            con.execute("INSERT INTO version_events VALUES (?, ?, ?, ?, ?, ?)",
                        [name, version, VERSION_TRUSTED, text, who, now])
        return VersionEvent(name, version, VERSION_TRUSTED, text, who, now.isoformat())

    @staticmethod
    def _status(con: Any, name: str, version: int) -> str | None:
        if con.execute("SELECT 1 FROM promotions WHERE proposal_name = ? AND version = ?",
                       [name, version]).fetchone() is None:
            return None
        row = con.execute("SELECT status FROM version_events WHERE name = ? AND version = ? "
                          "ORDER BY created_at DESC LIMIT 1", [name, version]).fetchone()
        return str(row[0]) if row else VERSION_TRUSTED

    def suspects(self, name: str | None = None) -> list[VersionEvent]:
        """Versions whose latest event is SUSPECT, with the event's reason."""
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT name, version, status, reason, actor, epoch_us(created_at) FROM version_events "
                + ("WHERE name = ? " if name is not None else "")
                + "QUALIFY row_number() OVER (PARTITION BY name, version ORDER BY created_at DESC) = 1 "
                "ORDER BY name, version", [name] if name is not None else None).fetchall()
        out: list[VersionEvent] = []
        for r in rows:
            if r[2] == VERSION_SUSPECT:
                at = _utc(r[5])
                out.append(VersionEvent(r[0], int(r[1]), r[2], r[3], r[4], at.isoformat() if at else ""))
        return out

    def version_events(self, name: str, version: int) -> list[VersionEvent]:
        with self.ledger.connect() as con:
            rows = con.execute("SELECT name, version, status, reason, actor, epoch_us(created_at) FROM version_events "
                               "WHERE name = ? AND version = ? ORDER BY created_at", [name, version]).fetchall()
        return [VersionEvent(r[0], int(r[1]), r[2], r[3], r[4], (_utc(r[5]) or utcnow()).isoformat()) for r in rows]

    # -- model calls outside builds ----------------------------------------------------------------
    def record_model_call(self, *, purpose: str, name: str, build_id: str | None, model: str,
                          prompt_tokens: int | None, completion_tokens: int | None, latency_ms: float | None,
                          ok: bool) -> None:
        with self.ledger.connect() as con:
            con.execute("INSERT INTO model_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [f"call-{uuid.uuid4().hex[:16]}", purpose, name, build_id, model, prompt_tokens,
                         completion_tokens, latency_ms, ok, utcnow()])

    # -- attestations ------------------------------------------------------------------------------
    def record_attestation(self, *, seq: int, name: str, version: int | None, build_id: str, envelope_sha256: str,
                           key_id: str) -> None:
        with self.ledger.connect() as con:
            con.execute("INSERT INTO attestations VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
                        [seq, name, version, build_id, envelope_sha256, key_id, utcnow()])

    def attestation(self, seq: int) -> tuple[str | None, str | None, str | None] | None:
        """(envelope sha256, key id, note) of promotion `seq` (its first row), or None: one promotion's row, not the
        table (a promotion step reads its own card's)."""
        with self.ledger.connect() as con:
            row = con.execute("SELECT envelope_sha256, key_id, note FROM attestations WHERE promotion_seq = ? "
                              "ORDER BY created_at LIMIT 1", [seq]).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def attestations(self) -> dict[int, tuple[str | None, str | None, str | None]]:
        """promotion seq → (envelope sha256, key id, note); the first row of a promotion counts."""
        with self.ledger.connect() as con:
            rows = con.execute("SELECT promotion_seq, envelope_sha256, key_id, note FROM attestations "
                               "ORDER BY created_at").fetchall()
        out: dict[int, tuple[str | None, str | None, str | None]] = {}
        for r in rows:
            out.setdefault(int(r[0]), (r[1], r[2], r[3]))
        return out
