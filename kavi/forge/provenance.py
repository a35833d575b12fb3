"""The forge side of signed provenance: write a promotion's attestation (checking them is
kavi/promotion/provenance.py; the signing itself is kavi/promotion/attestation.py)."""

import json
from typing import Any

from kavi.forge.attempt import canonical
from kavi.forge.card import VersionFacts, skill_card, version_facts
from kavi.forge.context import ForgeContext
from kavi.ledger.artifacts import ArtifactRef, sha256_bytes
from kavi.ledger.records import PromotionRow
from kavi.ledger.verification_records import VerificationRecords
from kavi.promotion.attestation import (
    key_id,
    sign,
    signing_key,
    statement,
)
from kavi.promotion.statements import test_result_statement, vsa_statement

COACH_GATE = "coach"


def _gate_entry(r: dict[str, Any]) -> dict[str, Any]:
    return {"gate": r["gate"], "verdict": r["verdict"], "effective_verdict": r["effective_verdict"],
            "reason": str(r["reason"])[:500], "duration_ms": r["duration_ms"]}


def attestation_predicate(ctx: ForgeContext, promo: PromotionRow, facts: VersionFacts | None = None
                          ) -> dict[str, Any]:
    facts = facts or version_facts(ctx, promo)
    build, gates, vetted = facts.build, facts.gates, facts.vetted
    verifications = VerificationRecords(ctx.records.ledger)
    verification = verifications.latest_verification_of_builds([promo.build_id]).get(promo.build_id)
    fingerprint = verifications.fingerprint_parts(verification.fingerprint) if verification is not None else None
    coach = next((r for r in gates if r["gate"] == COACH_GATE), None)
    if coach is not None and coach.get("verdict") == "omitted":
        coach = None  # no second model reviewed it (ceremony low, one model): the gate list keeps the reason
    approval = ctx.records.approval_for(promo.proposal_name, promo.build_id)
    return {
        "skill": {"name": promo.proposal_name, "version": promo.version, "source_sha256": promo.source_sha256,
                  "test_sha256": promo.test_sha256, "side_effect_class": promo.side_effect_class},
        "proposal": {"spec_sha256": promo.spec_sha256, "spec_revision": promo.spec_revision},
        "builder": {"build_id": promo.build_id, "attempt": build.attempt_number if build else None,
                    "model": build.model if build else None, "endpoint": build.endpoint if build else None},
        "origin": "vetted" if vetted is not None else "forged",
        "surface": facts.surface.to_json(),
        **({"vetted_source": vetted} if vetted is not None else {}),
        "verification": {
            "report_sha256": verification.report_sha256 if verification else None,
            "fingerprint": None if verification is None else {"digest": verification.fingerprint,
                                                              **(fingerprint or {})},
            "gates": [_gate_entry(r) for r in gates],
        },
        "coach": None if coach is None else {**_gate_entry(coach), "details": coach.get("details")},
        "approver": {"approved_by": promo.approved_by, "policy": (approval or {}).get("policy"),
                     "at": (approval or {}).get("at")},
        "promotion": {"seq": promo.seq, "record_hash": promo.record_hash, "at": promo.created_at.isoformat()},
    }


def _evidence_statements(ctx: ForgeContext, promo: PromotionRow, key: Any, gates: list[dict[str, Any]]
                         ) -> tuple[dict[str, Any], ArtifactRef]:
    """Sign a Test Result statement per gate and the version's VSA, and store them as one artifact (name → the
    envelope's JSON text, each file `kavi export` writes); their digests, and the artifact."""
    verifications = VerificationRecords(ctx.records.ledger)
    ver = verifications.latest_verification_of_builds([promo.build_id]).get(promo.build_id)
    digest = ver.fingerprint if ver is not None else None
    parts = verifications.fingerprint_parts(digest) if digest else None
    subject = promo.skill_path
    texts: dict[str, str] = {}
    for g in gates:
        env = sign(test_result_statement(subject, promo.source_sha256, g, fingerprint=parts,
                                         fingerprint_digest=digest), key)
        texts[f"test-result-{g['gate']}"] = json.dumps(env, sort_keys=True, indent=2)
    results = {label: sha256_bytes(text.encode()) for label, text in texts.items()}
    passed = bool(gates) and all(g["effective_verdict"] != "failed" for g in gates)
    vsa = sign(vsa_statement(subject, promo.source_sha256, passed=passed, fingerprint=parts, fingerprint_digest=digest,
                             inputs=results, resource_uri=f"kavi:{promo.proposal_name}@{promo.version}"), key)
    texts["vsa"] = json.dumps(vsa, sort_keys=True, indent=2)
    ref = ctx.store.put(canonical({"kind": STATEMENTS_KIND, "statements": texts}), "evidence_statements")
    return {"bundle_sha256": ref.sha256, "test_results": results,
            "vsa": sha256_bytes(texts["vsa"].encode())}, ref


STATEMENTS_KIND = "EVIDENCE_STATEMENTS"


def statement_texts(ctx: ForgeContext, evidence: dict[str, Any]) -> dict[str, str]:
    """The envelopes an attestation's `evidence_statements` names, by name (empty for an older attestation)."""
    sha = evidence.get("bundle_sha256")
    if not sha:
        return {}
    doc = json.loads(ctx.store.get(str(sha)))
    texts: dict[str, str] = doc["statements"]
    return texts


def attest_promotion(ctx: ForgeContext, promo: PromotionRow) -> str:
    """Sign and store the promotion's attestation; link it in the ledger. Returns the envelope's sha256."""
    key = signing_key(ctx.home)
    facts = version_facts(ctx, promo)  # read once for the card, the statements and the predicate
    card = ctx.store.put(canonical(skill_card(ctx, promo, facts)), "skill_card")  # the card the attestation hashes
    evidence, statements = _evidence_statements(ctx, promo, key, facts.gates)
    stmt = statement(subject_name=promo.skill_path, source_sha256=promo.source_sha256,
                     predicate={**attestation_predicate(ctx, promo, facts), "card_sha256": card.sha256,
                                "evidence_statements": evidence})
    envelope = sign(stmt, key)
    ref = ctx.store.put(json.dumps(envelope, sort_keys=True, indent=2).encode(), "attestation")
    ctx.records.record_artifacts([card, statements, ref])  # one statement for the promotion's three artifacts
    VerificationRecords(ctx.records.ledger).record_attestation(
        seq=promo.seq, name=promo.proposal_name, version=promo.version, build_id=promo.build_id,
        envelope_sha256=ref.sha256, key_id=key_id(key.public_key()))
    return ref.sha256
