"""Checking signed provenance: find a promotion's attestation and check every one against the home's key and the
promoted bytes, for `kavi verify` and `kavi attest` (the signing itself is in kavi/promotion/attestation.py)."""

import json
from dataclasses import dataclass
from typing import Any

from kavi.ledger.artifacts import ArtifactCorruptError, ArtifactStore
from kavi.ledger.records import ForgeRecords, PromotionRow
from kavi.ledger.verification_records import VerificationRecords
from kavi.promotion.attestation import AttestationError, home_public_key, verify_envelope


@dataclass(frozen=True)
class AttestationCheck:
    problems: list[str]
    checked: int
    legacy: int  # promotions made before signed provenance existed


def check_attestations(records: ForgeRecords, store: ArtifactStore, home: Any) -> AttestationCheck:
    """Every promotion's attestation: present, its bytes intact, signed by the home's key, about the promoted bytes."""
    links = VerificationRecords(records.ledger).attestations()
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
    link = VerificationRecords(records.ledger).attestation(promo.seq)
    if link is None or link[0] is None:
        raise LookupError(f"{name}@{promo.version} has no signed attestation"
                          + (f" ({link[2]})" if link is not None and link[2] else ""))
    return promo, link[0]
