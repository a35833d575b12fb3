"""Artifacts and their lineage: which artifact was made from which."""

from collections.abc import Sequence
from typing import Any

from kavi.ledger.artifacts import ArtifactRef
from kavi.ledger.record_base import _ARTIFACT_COLS, RecordsBase, _artifact, _insert_new
from kavi.ledger.store import utcnow


class LineageRecords(RecordsBase):
    """Artifacts and the edges between them."""

    def record_artifact(self, ref: ArtifactRef) -> None:
        with self.ledger.connect() as con:
            _artifact(con, ref, utcnow())

    def record_artifacts(self, refs: Sequence[ArtifactRef]) -> None:
        """Several artifacts in one statement (a promotion's statements and card)."""
        if not refs:
            return
        with self.ledger.connect() as con:
            _insert_new(con, "artifacts", ("sha256",), _ARTIFACT_COLS,
                        [[r.sha256, r.kind, r.size, str(r.path), utcnow()] for r in refs],
                        newer_than=[r.stored_at for r in refs])

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
