"""One proposal's lineage (attempts, artifacts, verdicts, promotions) as `kavi lineage --json` prints it."""

from typing import Any


def lineage_doc(records: Any, name: str) -> dict[str, Any]:
    with records.session():  # one connection for the dozen queries below
        return _lineage_doc(records, name)


def _lineage_doc(records: Any, name: str) -> dict[str, Any]:
    row = records.require_proposal(name)
    attempts = []
    builds = records.builds(name)
    ids = [b.build_id for b in builds]
    artifacts, verdicts = records.artifacts_of_builds(ids), records.gate_verdicts(ids)
    for b in builds:
        arts = artifacts[b.build_id]
        attempts.append({
            "attempt": b.attempt_number,
            "build_id": b.build_id,
            "parent_build_id": b.parent_build_id,
            "run_id": b.run_id,
            "model": b.model,
            "endpoint": b.endpoint,
            "status": b.status,
            "failure_kind": b.failure_kind,
            "packet_sha256": arts.get("packet"),
            "answer_sha256": arts.get("llm_answer"),
            "build_log_sha256": arts.get("build_log"),
            "skill_sha256": b.skill_sha256,
            "test_sha256": b.test_sha256,
            "report_sha256": arts.get("report"),
            "research_sha256": arts.get("research"),
            "gates": verdicts[b.build_id],
        })
    notes = {n["build_id"]: n for n in records.research_notes(name)}
    for a in attempts:
        n = notes.get(a["build_id"])
        if n:
            a["research"] = {"failure_kind": n["failure_kind"], "triggers": n["triggers"],
                             "escalated": n["escalated"], "facts": n["facts"]}
    promotions = [
        {"seq": p.seq, "version": p.version, "spec_revision": p.spec_revision, "side_effect_class": p.side_effect_class,
         "build_id": p.build_id, "approved_by": p.approved_by, "source_sha256": p.source_sha256,
         "skill_path": p.skill_path, "record_hash": p.record_hash, "prev_hash": p.prev_hash,
         "at": p.created_at.isoformat()}
        for p in records.promotions(name)
    ]
    revisions = [
        {"revision": r.revision, "spec_sha256": r.spec_sha256, "side_effect_class": r.side_effect_class.value,
         "class_change": list(r.class_change) if r.class_change else None, "diff": r.diff, "by": r.actor,
         "at": r.created_at.isoformat()}
        for r in records.revisions(name)
    ]
    return {
        "proposal": name,
        "status": row.status.value,
        "revision": row.revision,
        "trusted_version": row.trusted_version,
        "spec_sha256": row.spec_sha256,
        "side_effect_class": row.proposal.side_effect_class.value,
        "ceremony": _ceremony_of(records, name, row.proposal),
        "attempts": attempts,
        "promotions": promotions,
        "revisions": revisions,
        "events": records.status_events(name),
        "edges": records.lineage_edges(name),
        "decomposition_edges": _decomposition_edges(records, name),
    }


def _ceremony_of(records: Any, name: str, proposal: Any) -> dict[str, Any]:
    from kavi.forge.levels import proposal_ceremony

    return proposal_ceremony(records, name, proposal).to_dict()



def _decomposition_edges(records: Any, name: str) -> list[dict[str, Any]]:
    """Parent → child edges of decompositions touching NAME; `kavi tree NAME` shows the whole tree."""
    from kavi.decompose.records import DecompositionRecords

    return DecompositionRecords(records).edges(name)

