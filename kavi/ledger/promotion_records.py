"""Approvals and promotions: the hash-chained records that made builds trusted versions."""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from kavi.ledger.proposal_records import _set_status
from kavi.ledger.record_base import _EPOCH, LedgerConflictError, LedgerRecordError, RecordsBase, _utc
from kavi.ledger.store import utcnow
from kavi.lifecycle import ProposalStatus

GENESIS_HASH = "0" * 64


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


_PROMOTION_COLS = (
    "seq, proposal_name, build_id, from_status, to_status, approved_by, source_sha256, test_sha256, skill_path, "
    "prev_hash, record_hash, created_at, version, spec_revision, spec_sha256, side_effect_class, record_format"
)
_PROMOTION_SELECT = _PROMOTION_COLS.replace("created_at", "epoch_us(created_at)")


def _promotion_row(r: Sequence[Any]) -> PromotionRow:
    # Read back in UTC, as it was hashed (utcnow()), whatever the session's time zone.
    return PromotionRow(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], _utc(r[11]) or _EPOCH,
                        r[12], r[13], r[14], r[15], int(r[16] or 1))


class PromotionRecords(RecordsBase):
    """Approvals and promotions, and the chain they form."""

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
            _set_status(con, name, ProposalStatus.TRUSTED, build_id,
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
