"""A vetted attempt (`kavi vet`): a third party's code in the builder's place, through the same packet, build, gates,
research and promotion as a forged one.

The CLI stores a VET_BUNDLE (the wrapped skill file, the tests, the source's digests and origin) and starts a forge
run tagged with its digest (VET_TAG). The packet step then freezes a VET_PACKET naming the bundle instead of
routing a model, and the build step writes the bundle's files instead of asking one.
"""

import json
from dataclasses import dataclass
from typing import Any

from kavi.build.allowlist import skill_path, test_path
from kavi.forge.attempt import canonical, now
from kavi.forge.context import ForgeContext
from kavi.forge.packet import PacketOutcome, refuse_if_decomposed
from kavi.ledger.records import LedgerRecordError, new_build_id
from kavi.lifecycle import VETTED_BUILDER
from kavi.proposals.model import Proposal

VET_TAG = "kavi/vet"  # a forge run's tag: the digest of the VET_BUNDLE it builds from
VET_PACKET = "VET_PACKET"
VET_BUNDLE = "VET_BUNDLE"
VETTED_ENDPOINT = "none (vetted source)"


@dataclass(frozen=True)
class VetBundle:
    """What a vetted attempt builds from: the files the forge wrote around the third party's code."""

    name: str
    skill: str  # the skill module: the third party's code and the forge's contract code
    tests: str
    tests_from: str  # "third party" (shipped tests) or "examples" (the proposal's visible examples)
    origin: str  # "python file" or "agent skill folder"
    code_path: str
    digest_set: str
    digests: dict[str, str]
    description: str | None = None
    skill_md: str | None = None  # SKILL.md's text: data for the coach, quoted, never instructions

    def to_json(self) -> dict[str, Any]:
        return {"kind": VET_BUNDLE, "name": self.name, "files": {skill_path(self.name): self.skill,
                                                                 test_path(self.name): self.tests},
                "tests_from": self.tests_from, "origin": self.origin, "code_path": self.code_path,
                "digest_set": self.digest_set, "digests": self.digests, "description": self.description,
                "skill_md": self.skill_md}


def store_bundle(ctx: ForgeContext, bundle: VetBundle) -> str:
    """Store the bundle as an artifact of the home; its digest is the run's VET_TAG."""
    ref = ctx.store.put(canonical(bundle.to_json()), "vet_bundle")
    with ctx.records.session():
        ctx.records.record_artifact(ref)
    return ref.sha256


def load_bundle(ctx: ForgeContext, digest: str) -> dict[str, Any]:
    try:
        doc: dict[str, Any] = json.loads(ctx.store.get(digest))
    except (OSError, KeyError, ValueError) as err:
        raise LedgerRecordError(f"no vet bundle {digest[:12]} in this home ({err})") from None
    if doc.get("kind") != VET_BUNDLE:
        raise LedgerRecordError(f"artifact {digest[:12]} is not a vet bundle")
    return doc


def prepare_vet_packet(ctx: ForgeContext, name: str, run_id: str | None, bundle_digest: str) -> PacketOutcome:
    """Freeze the VET_PACKET of the next attempt: the bundle in place of a routed model and its messages."""
    bundle = load_bundle(ctx, bundle_digest)
    if bundle.get("name") != name:
        raise LedgerRecordError(f"the vet bundle {bundle_digest[:12]} is for {bundle.get('name')!r}, not {name!r}")
    with ctx.records.session():
        row = ctx.records.require_proposal(name)
        refuse_if_decomposed(row)
        builds = ctx.records.builds(name)
        attempt = (builds[-1].attempt_number + 1) if builds else 1
        parent = builds[-1].build_id if builds else None
        build_id = new_build_id(name, attempt, row.spec_sha256, parent)
        proposal: Proposal = row.proposal
        routing = {"model": VETTED_BUILDER, "reason": f"vetted: the third party's code from a {bundle['origin']} "
                   f"(digest set {str(bundle['digest_set'])[:12]}), no model routed"}
        packet = {
            "packet_version": 1, "kind": VET_PACKET, "build_id": build_id, "proposal": name,
            "spec_sha256": row.spec_sha256, "attempt": attempt, "attempt_budget": 1, "parent_build_id": parent,
            "spec": proposal.builder_view(), "prior_failures": [], "hints": [], "routing": routing,
            "model": VETTED_BUILDER, "endpoint": VETTED_ENDPOINT, "messages": [],
            "vet_bundle": bundle_digest, "origin": bundle["origin"], "digest_set": bundle["digest_set"],
            "created_at": now(),
        }
        ref = ctx.store.put(canonical(packet), "build_packet")
        spec_ref = ctx.store.put(proposal.canonical_json().encode(), "proposal_spec")
        ctx.records.record_artifact(spec_ref)
        ctx.records.start_build(name, run_id=run_id, model=VETTED_BUILDER, endpoint=VETTED_ENDPOINT,
                                packet=ref, build_id=build_id, attempt=attempt, parent_build_id=parent,
                                lineage_parent=spec_ref.sha256)
    return PacketOutcome(build_id, attempt, parent, VETTED_BUILDER, ref.sha256, routing, 0, [], 1)


def vetted_files(ctx: ForgeContext, packet: dict[str, Any]) -> tuple[list[tuple[str, str]], str]:
    """The files of a VET_PACKET's bundle as a build answer gives them, and the bundle's digest."""
    digest = str(packet["vet_bundle"])
    bundle = load_bundle(ctx, digest)
    return [(str(p), str(t)) for p, t in dict(bundle["files"]).items()], digest


def _bundle_of_packet(ctx: ForgeContext, packet_sha256: str | None) -> tuple[str, dict[str, Any]] | None:
    """(digest, bundle) of a VET_PACKET's bundle; None for any other packet, or one that cannot be read (a record
    made by hand)."""
    if not packet_sha256:
        return None
    try:
        packet = json.loads(ctx.store.get(packet_sha256))
    except (OSError, KeyError, ValueError):
        return None
    if not isinstance(packet, dict) or packet.get("kind") != VET_PACKET:
        return None
    digest = str(packet["vet_bundle"])
    return digest, load_bundle(ctx, digest)


def vetted_provenance(ctx: ForgeContext, packet_sha256: str | None) -> dict[str, Any] | None:
    """The vetted source of a build, for its attestation: origin, digest set and each file's digest."""
    found = _bundle_of_packet(ctx, packet_sha256)
    if found is None:
        return None
    digest, bundle = found
    return {"origin": bundle["origin"], "code_path": bundle["code_path"], "digest_set": bundle["digest_set"],
            "digests": bundle["digests"], "tests_from": bundle["tests_from"], "bundle_sha256": digest}


def reviewer_notes(ctx: ForgeContext, build: Any) -> str | None:
    """What a vetted build's third party wrote for reviewers (its SKILL.md), for the coach to read as data."""
    if build.model != VETTED_BUILDER:
        return None
    try:
        found = _bundle_of_packet(ctx, build.packet_sha256)
    except LedgerRecordError:
        return None
    text = found[1].get("skill_md") if found is not None else None
    return str(text) if text else None
