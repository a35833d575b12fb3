"""The ledger's decomposition records (schema 8): one row per decomposition request, and parent → child edges."""

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import utcnow

# A decomposition's status: WAITING while its children forge, VERIFIED when the composition passed the parent's
# examples and holdouts, FAILED when a child failed past its budget or the composition failed, REFUSED when the
# model's answer was refused (nothing was intaken).
WAITING = "WAITING"
VERIFIED = "VERIFIED"
FAILED = "FAILED"
REFUSED = "REFUSED"


@dataclass(frozen=True)
class DecompositionRow:
    decomposition_id: str
    parent_name: str
    spec_sha256: str
    root_name: str
    depth: int
    trigger: str
    model: str | None
    endpoint: str | None
    status: str
    reason: str | None
    composition: dict[str, Any] | None
    answer_sha256: str | None
    composition_sha256: str | None
    build_id: str | None
    created_at: str
    children: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"decomposition_id": self.decomposition_id, "parent": self.parent_name,
                "spec_sha256": self.spec_sha256, "root": self.root_name, "depth": self.depth,
                "trigger": self.trigger, "model": self.model, "status": self.status, "reason": self.reason,
                "children": list(self.children), "composition": self.composition,
                "answer_sha256": self.answer_sha256, "composition_sha256": self.composition_sha256,
                "build_id": self.build_id, "at": self.created_at}


_COLS = ("decomposition_id, parent_name, spec_sha256, root_name, depth, trigger, model, endpoint, status, reason, "
         "composition_json, answer_sha256, composition_sha256, build_id, strftime(created_at, '%Y-%m-%dT%H:%M:%S')")


def new_decomposition_id(parent: str, spec_sha256: str, seq: int) -> str:
    return f"{parent}-d{seq}-{hashlib.sha256(f'{spec_sha256}:{seq}'.encode()).hexdigest()[:8]}"


class DecompositionRecords:
    """Reads and writes of the decomposition tables, through the forge records' ledger (short connections)."""

    def __init__(self, records: ForgeRecords) -> None:
        self.records = records
        self.ledger = records.ledger

    def record(self, *, parent: str, spec_sha256: str, root: str, depth: int, trigger: str, model: str | None,
               endpoint: str | None, status: str, reason: str | None, composition: dict[str, Any] | None,
               answer_sha256: str | None, children: list[str]) -> str:
        now = utcnow()
        with self.ledger.connect() as con:
            row = con.execute("SELECT count(*) FROM decompositions WHERE parent_name = ?", [parent]).fetchone()
            did = new_decomposition_id(parent, spec_sha256, int(row[0] if row else 0) + 1)
            con.execute(
                "INSERT INTO decompositions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?)",
                [did, parent, spec_sha256, root, depth, trigger, model, endpoint, status, (reason or "")[:2000] or None,
                 json.dumps(composition, sort_keys=True) if composition is not None else None, answer_sha256, now,
                 now])
            for i, child in enumerate(children):
                con.execute("INSERT INTO decomposition_edges VALUES (?, ?, ?, ?, ?)", [did, parent, child, i, now])
        return did

    def set_status(self, decomposition_id: str, status: str, reason: str | None, *,
                   composition_sha256: str | None = None, build_id: str | None = None) -> None:
        with self.ledger.connect() as con:
            con.execute(
                "UPDATE decompositions SET status = ?, reason = ?, "
                "composition_sha256 = coalesce(?, composition_sha256), build_id = coalesce(?, build_id), "
                "updated_at = ? WHERE decomposition_id = ?",
                [status, (reason or "")[:2000] or None, composition_sha256, build_id, utcnow(), decomposition_id])

    def _rows(self, where: str, params: list[Any]) -> list[DecompositionRow]:
        with self.ledger.connect() as con:
            rows = con.execute(f"SELECT {_COLS} FROM decompositions WHERE {where} ORDER BY created_at", params
                               ).fetchall()
            edges: dict[str, list[str]] = {}
            ids = [r[0] for r in rows]
            if ids:
                marks = ", ".join("?" for _ in ids)
                for did, child in con.execute(
                        f"SELECT decomposition_id, child_name FROM decomposition_edges WHERE decomposition_id IN "
                        f"({marks}) ORDER BY position", ids).fetchall():
                    edges.setdefault(str(did), []).append(str(child))
        return [DecompositionRow(r[0], r[1], r[2], r[3], int(r[4]), r[5], r[6], r[7], r[8], r[9],
                                 json.loads(r[10]) if r[10] else None, r[11], r[12], r[13], str(r[14]),
                                 tuple(edges.get(str(r[0]), ()))) for r in rows]

    def of_parent(self, parent: str) -> list[DecompositionRow]:
        """Every decomposition request of `parent`, oldest first (refused ones included)."""
        return self._rows("parent_name = ?", [parent])

    def active(self, parent: str) -> DecompositionRow | None:
        """The parent's accepted decomposition (the latest that was not refused), if any."""
        rows = [r for r in self.of_parent(parent) if r.status != REFUSED]
        return rows[-1] if rows else None

    def all_active(self) -> list[DecompositionRow]:
        latest: dict[str, DecompositionRow] = {}
        for r in self._rows("status <> ?", [REFUSED]):
            latest[r.parent_name] = r
        return list(latest.values())

    def parent_of(self, child: str) -> tuple[str, int, str] | None:
        """(parent, depth of the parent, root) when `child` was intaken as a child of a decomposition."""
        with self.ledger.connect() as con:
            row = con.execute(
                "SELECT d.parent_name, d.depth, d.root_name FROM decomposition_edges e JOIN decompositions d "
                "ON d.decomposition_id = e.decomposition_id WHERE e.child_name = ? ORDER BY e.created_at LIMIT 1",
                [child]).fetchone()
        return (str(row[0]), int(row[1]), str(row[2])) if row else None

    def tree_size(self, root: str) -> int:
        """Proposals in the tree of `root`, the root included (children of accepted decompositions)."""
        with self.ledger.connect() as con:
            row = con.execute(
                "SELECT count(DISTINCT e.child_name) FROM decomposition_edges e JOIN decompositions d "
                "ON d.decomposition_id = e.decomposition_id WHERE d.root_name = ? AND d.status <> ?",
                [root, REFUSED]).fetchone()
        return 1 + int(row[0] if row else 0)

    def edges(self, name: str) -> list[dict[str, Any]]:
        """The edges touching `name`: to its children and from its parent, for `kavi lineage`."""
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT e.decomposition_id, e.parent_name, e.child_name, e.position, d.status FROM decomposition_edges "
                "e JOIN decompositions d ON d.decomposition_id = e.decomposition_id "
                "WHERE e.parent_name = ? OR e.child_name = ? ORDER BY e.created_at, e.position", [name, name]
            ).fetchall()
        return [{"decomposition_id": r[0], "parent": r[1], "child": r[2], "position": int(r[3]),
                 "decomposition_status": r[4]} for r in rows]
