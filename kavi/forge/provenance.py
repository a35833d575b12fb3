"""The forge side of signed provenance: write a promotion's attestation, find and check them for `kavi verify` and
`kavi attest` (the signing itself is in kavi/promotion/attestation.py)."""

import json
from dataclasses import dataclass
from typing import Any

from kavi.forge.context import ForgeContext
from kavi.ledger.artifacts import ArtifactCorruptError, ArtifactStore
from kavi.ledger.ground import GroundRecords
from kavi.ledger.records import ForgeRecords, PromotionRow
from kavi.promotion.attestation import (
    AttestationError,
    home_public_key,
    key_id,
    sign,
    signing_key,
    statement,
    verify_envelope,
)

COACH_GATE = "coach"


def _gate_entry(r: dict[str, Any]) -> dict[str, Any]:
    return {"gate": r["gate"], "verdict": r["verdict"], "effective_verdict": r["effective_verdict"],
            "reason": str(r["reason"])[:500], "duration_ms": r["duration_ms"]}


def attestation_predicate(ctx: ForgeContext, promo: PromotionRow) -> dict[str, Any]:
    build = ctx.records.get_build(promo.build_id)
    gates = ctx.records.gate_results(promo.build_id)
    ground = GroundRecords(ctx.records.ledger)
    verification = ground.latest_verification_of_builds([promo.build_id]).get(promo.build_id)
    fingerprint = ground.fingerprint_parts(verification.fingerprint) if verification is not None else None
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


def attest_promotion(ctx: ForgeContext, promo: PromotionRow) -> str:
    """Sign and store the promotion's attestation; link it in the ledger. Returns the envelope's sha256."""
    key = signing_key(ctx.home)
    stmt = statement(subject_name=promo.skill_path, source_sha256=promo.source_sha256,
                     predicate=attestation_predicate(ctx, promo))
    envelope = sign(stmt, key)
    ref = ctx.store.put(json.dumps(envelope, sort_keys=True, indent=2).encode(), "attestation")
    ctx.records.record_artifact(ref)
    GroundRecords(ctx.records.ledger).record_attestation(
        seq=promo.seq, name=promo.proposal_name, version=promo.version, build_id=promo.build_id,
        envelope_sha256=ref.sha256, key_id=key_id(key.public_key()))
    return ref.sha256


@dataclass(frozen=True)
class AttestationCheck:
    problems: list[str]
    checked: int
    legacy: int  # promotions made before signed provenance existed


def check_attestations(records: ForgeRecords, store: ArtifactStore, home: Any) -> AttestationCheck:
    """Every promotion's attestation: present, its bytes intact, signed by the home's key, about the promoted bytes."""
    links = GroundRecords(records.ledger).attestations()
    public = home_public_key(home)
    problems: list[str] = []
    checked = legacy = 0
    for promo in records.promotions():
        ref = f"{promo.proposal_name}@{promo.version} (promotion #{promo.seq})"
        link = links.get(promo.seq)
        if link is None:
            problems.append(f"{ref}: no attestation is recorded for this promotion")
            continue
        envelope_sha, _, _ = link
        if envelope_sha is None:
            legacy += 1
            continue
        if public is None:
            problems.append(f"{ref}: the home's public key (keys/attestation.pub) is missing: the signature cannot "
                            "be checked")
            continue
        try:
            data = store.get(envelope_sha)
            verified = verify_envelope(json.loads(data), public)
        except FileNotFoundError:
            problems.append(f"{ref}: its attestation artifact {envelope_sha[:16]}… is missing")
            continue
        except ArtifactCorruptError:
            problems.append(f"{ref}: its attestation artifact {envelope_sha[:16]}… was altered (its bytes no longer "
                            "match their hash)")
            continue
        except (AttestationError, ValueError) as err:
            problems.append(f"{ref}: attestation {envelope_sha[:16]}… does not verify: {err}")
            continue
        if verified.subject_sha256 != promo.source_sha256:
            problems.append(f"{ref}: the attestation is about sha256 {verified.subject_sha256[:16]}…, not the "
                            f"promoted {promo.source_sha256[:16]}…")
        else:
            checked += 1
    return AttestationCheck(problems, checked, legacy)


def find_attestation(records: ForgeRecords, name: str, version: int | None) -> tuple[PromotionRow, str]:
    """(promotion, envelope sha256) of NAME@VERSION, or of NAME's latest promotion; LookupError otherwise."""
    promos = records.promotions(name)
    if version is not None:
        promos = [p for p in promos if p.version == version]
    if not promos:
        raise LookupError(f"{name}{'' if version is None else f'@{version}'} was never promoted")
    promo = promos[-1]
    link = GroundRecords(records.ledger).attestations().get(promo.seq)
    if link is None or link[0] is None:
        raise LookupError(f"{name}@{promo.version} has no signed attestation"
                          + (f" ({link[2]})" if link is not None and link[2] else ""))
    return promo, link[0]
