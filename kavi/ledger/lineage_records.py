"""Artifacts and their lineage: which artifact was made from which."""

from typing import Any

from kavi.ledger.artifacts import ArtifactRef
from kavi.ledger.record_base import RecordsBase, _artifact
from kavi.ledger.store import utcnow


class LineageRecords(RecordsBase):
    """Artifacts and the edges between them."""

    def record_artifact(self, ref: ArtifactRef) -> None:
        with self.ledger.connect() as con:
            _artifact(con, ref, utcnow())

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
