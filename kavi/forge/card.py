"""A trusted version's skill card: what it does, what it reaches, the evidence and its figures, its known limits
and what it cost, generated from the ledger at promotion and hashed into the attestation."""

import json
from dataclasses import dataclass
from typing import Any

from kavi.forge.context import ForgeContext
from kavi.forge.surfaces import version_surface
from kavi.forge.vetted import vetted_provenance
from kavi.ledger.records import BuildRow, PromotionRow
from kavi.promotion.surface import Surface

CARD_KIND = "SKILL_CARD"


@dataclass(frozen=True)
class VersionFacts:
    """What a promotion's card and attestation both say, read once: its build, gate results, surface and vetted
    source (None for a forged build)."""

    build: BuildRow | None
    gates: list[dict[str, Any]]
    surface: Surface
    vetted: dict[str, Any] | None


def version_facts(ctx: ForgeContext, promo: PromotionRow) -> VersionFacts:
    build = ctx.records.get_build(promo.build_id)
    return VersionFacts(
        build, ctx.records.gate_results(promo.build_id),
        version_surface(ctx, promo.proposal_name, promo.source_sha256, promo.spec_sha256, promo.side_effect_class),
        vetted_provenance(ctx, build.packet_sha256) if build is not None else None)


def _evidence(gates: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """The figures of each gate worth a reader's time, and the limits the evidence itself states."""
    by = {g["gate"]: g for g in gates}
    details = {k: (v.get("details") or {}) for k, v in by.items()}
    limits: list[str] = []
    ev: dict[str, Any] = {"gates": {k: v["effective_verdict"] for k, v in sorted(by.items())}}
    if "acceptance" in by:
        ev["acceptance"] = str(by["acceptance"]["reason"])
    if "coverage" in details and details["coverage"].get("percent") is not None:
        ev["coverage_percent"] = details["coverage"]["percent"]
    d = details.get("differential") or {}
    if d:
        ev["differential"] = {k: d.get(k) for k in ("generated", "ran", "compared", "agreed", "agreement_rate")}
        if not d.get("independent"):
            limits.append("no independent implementation was compared (one model, or a vetted source with none "
                          "configured): generated inputs were checked for crashes and types only")
    a = details.get("adequacy") or {}
    if a.get("tried"):
        ev["adequacy"] = {k: a.get(k) for k in ("tried", "killed", "surviving", "equivalent")}
        if a.get("surviving"):
            limits.append(f"{a['surviving']} mutant(s) of the code survived every example and holdout: the examples "
                          "leave that behaviour open")
        for q in a.get("questions") or []:
            limits.append(f"open question {q.get('number')}: what should it answer for "
                          f"{json.dumps(q.get('input'), sort_keys=True)[:120]}?")
    r = details.get("resource") or {}
    if r.get("deadline_s") is not None:
        ev["resource"] = {"deadline_s": r.get("deadline_s"), "max_growth": r.get("max_growth")}
    if "coach" in by:
        ev["coach"] = str(by["coach"]["reason"])
    return ev, limits


def skill_card(ctx: ForgeContext, promo: PromotionRow, facts: VersionFacts | None = None) -> dict[str, Any]:
    """The card of a promotion, as data (the attestation hashes its canonical JSON)."""
    from kavi.forge.economics import economics

    facts = facts or version_facts(ctx, promo)
    build, vetted = facts.build, facts.vetted
    spec = ctx.records.require_proposal(promo.proposal_name).proposal
    evidence, limits = _evidence(facts.gates)
    if spec.outside_domain:
        limits.append(f"{len(spec.outside_domain)} input(s) declared outside its domain by a person")
    costs = next((e for e in economics(ctx.records, ctx.home, promo.proposal_name) if e.version == promo.version),
                 None)
    return {
        "kind": CARD_KIND,
        "name": promo.proposal_name,
        "version": promo.version,
        "description": spec.description,
        "inputs": [f.model_dump(exclude_none=True) for f in spec.inputs],
        "outputs": [f.model_dump(exclude_none=True) for f in spec.outputs],
        "side_effect_class": promo.side_effect_class,
        "surface": facts.surface.to_json(),
        "origin": ({"kind": "vetted", "source": vetted["origin"], "digest_set": vetted["digest_set"]} if vetted
                   else {"kind": "forged", "model": build.model if build else None}),
        "evidence": evidence,
        "known_limits": limits,
        "economics": None if costs is None else {"attempts": costs.attempts, "failed_attempts": costs.failed_attempts,
                                                 "forge_cost_usd": round(costs.forge_cost_usd, 6),
                                                 "forge_wall_s": round(costs.forge_wall_s, 3)},
        "approved_by": promo.approved_by,
        "source_sha256": promo.source_sha256,
    }


def card_markdown(card: dict[str, Any]) -> str:
    """The card as a person reads it (the CLI and the UI show this)."""
    origin = card["origin"]
    made = (f"vetted from a {origin['source']} (digest set {str(origin['digest_set'])[:12]})"
            if origin["kind"] == "vetted" else f"forged by {origin.get('model')}")
    s = card["surface"]
    ev = card["evidence"]
    lines = [f"# {card['name']}@{card['version']}", "", str(card["description"]), "",
             f"- **made**: {made}; approved by {card['approved_by']}",
             "- **inputs**: " + ", ".join(f"{f['name']}: {f['type']}" for f in card["inputs"]),
             "- **outputs**: " + ", ".join(f"{f['name']}: {f['type']}" for f in card["outputs"]),
             f"- **reaches**: class {s['side_effect_class']}; imports {', '.join(s['imports']) or 'none'}; "
             f"secrets {', '.join(s['secrets']) or 'none'}; hosts {', '.join(s['hosts']) or 'none'}; "
             f"{'writes' if s['writes_vault'] else 'does not write'} to the vault", "", "## Evidence", ""]
    lines += [f"- {gate}: {verdict}" for gate, verdict in ev["gates"].items()]
    for key in ("acceptance", "coverage_percent", "differential", "adequacy", "resource", "coach"):
        if key in ev:
            lines.append(f"- {key.replace('_', ' ')}: {json.dumps(ev[key]) if isinstance(ev[key], dict) else ev[key]}")
    lines += ["", "## Known limits", ""] + ([f"- {x}" for x in card["known_limits"]] or ["- none the evidence states"])
    econ = card.get("economics")
    if econ:
        lines += ["", "## Economics", "", f"- {econ['attempts']} attempt(s), {econ['failed_attempts']} failed; "
                  f"forging cost ${econ['forge_cost_usd']:.4f} and {econ['forge_wall_s']:.1f} s"]
    return "\n".join(lines) + "\n"


def attested_card(ctx: ForgeContext, promo: PromotionRow) -> tuple[dict[str, Any], bool]:
    """The card the promotion's attestation hashes (and True), or, for a promotion attested before cards existed,
    one generated now from the ledger (and False)."""
    from kavi.ledger.verification_records import VerificationRecords
    from kavi.promotion.attestation import signed_predicate

    envelope_sha = (VerificationRecords(ctx.records.ledger).attestation(promo.seq) or (None, None, None))[0]
    if envelope_sha:
        try:
            predicate = signed_predicate(json.loads(ctx.store.get(envelope_sha)))
            if predicate.get("card_sha256"):
                card: dict[str, Any] = json.loads(ctx.store.get(str(predicate["card_sha256"])))
                return card, True
        except (OSError, KeyError, ValueError):
            pass
    return skill_card(ctx, promo), False
