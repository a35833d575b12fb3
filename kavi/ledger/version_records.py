"""Trusted versions: which promoted versions are served, their statuses and revocations."""

import json
from dataclasses import dataclass
from datetime import datetime

from kavi.ledger.record_base import _EPOCH, LedgerRecordError, RecordsBase, _utc
from kavi.ledger.store import utcnow
from kavi.settings import read_setting
from kavi.skills.base import SideEffectClass


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
    timeout_s: float | None = None  # the deadline its proposal asked for (None: the runtime's default)
    input_bounds: tuple[tuple[str, int], ...] = ()  # its proposal's inputs' max_size, (field, bound)

    @property
    def ref(self) -> str:
        """NAME@VERSION: how a pinned version is named in `kavi run` and in chains."""
        return f"{self.name}@{self.version}"


# The statuses of a promoted version (`version_events`; a version without an event is TRUSTED).
VERSION_TRUSTED = "TRUSTED"
VERSION_REVOKED = "REVOKED"
VERSION_RETIRED = "RETIRED"
VERSION_SUSPECT = "SUSPECT"  # its re-verification failed; served only under KAVI_SUSPECT_POLICY=allow


def served_statuses() -> str:
    """The version statuses `trusted_versions` serves, as SQL literals: SUSPECT too when the user allows it."""
    return "'TRUSTED', 'SUSPECT'" if read_setting("suspect_policy") == "allow" else "'TRUSTED'"


# Each version's latest event (a version without one is TRUSTED).
_VERSION_STATUS = ("SELECT name, version, arg_max(status, created_at) AS status FROM version_events "
                   "GROUP BY name, version")


class VersionRecords(RecordsBase):
    """Trusted versions and the events that change their status."""

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
                       epoch_us(p.created_at), p.version, p.spec_revision, p.seq,
                       TRY_CAST(json_extract(coalesce(r.spec_json, pr.spec_json), '$.timeout_s') AS DOUBLE),
                       CAST(json_extract(coalesce(r.spec_json, pr.spec_json), '$.inputs') AS VARCHAR)
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
                              int(r[9]), r[10], int(r[11]), r[12], _bounds(r[13])) for r in rows]

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


def _bounds(inputs_json: str | None) -> tuple[tuple[str, int], ...]:
    """The (field, max_size) pairs of a recorded spec's inputs (those that declare one)."""
    if not inputs_json or "max_size" not in inputs_json:
        return ()
    fields = json.loads(inputs_json)
    return tuple((str(f["name"]), int(f["max_size"])) for f in fields
                 if isinstance(f, dict) and isinstance(f.get("max_size"), int))
