"""`kavi export --format agent-skill`: a trusted version as an Agent Skills folder, with its evidence and proof.

The folder holds SKILL.md (the standard frontmatter; the skill card in its body), scripts/<name>.py (the trusted
bytes, unchanged), scripts/run.py (a command-line entry that runs it through the contained runtime after checking
the attestation: kavi.promotion.exported), attestation.json (the signed in-toto statement with its public key),
card.json and kavi.json (the manifest the entry reads), attestations/ (an in-toto Test Result statement per gate
and the SLSA VSA), and model.sig with model-signing.pub (the folder signed in the OpenSSF Model Signing format).
"""

import base64
import json
from pathlib import Path

import yaml

from kavi.forge.attempt import canonical
from kavi.forge.card import attested_card, card_markdown
from kavi.forge.context import ForgeContext
from kavi.ledger.records import LedgerRecordError, PromotionRow
from kavi.promotion.attestation import export_document, home_public_key
from kavi.promotion.exported import ATTESTATION, MANIFEST
from kavi.promotion.folder_signing import folder_key, sign_folder
from kavi.promotion.provenance import find_attestation

RUN_PY = '''"""Run {name}@{version}, exported by Kavi Forge, in its contained runtime (kavi-forge must be installed).

    python scripts/run.py '{{"field": "value"}}'

It first checks that scripts/{name}.py is the skill attestation.json vouches for.
"""

import sys
from pathlib import Path

from kavi.promotion.exported import main

sys.exit(main(Path(__file__).resolve().parent.parent, sys.argv[1:]))
'''


def export_agent_skill(ctx: ForgeContext, promo: PromotionRow, out_dir: Path) -> Path:
    """Write NAME@V as an Agent Skills folder under `out_dir` (its name hyphenated); returns the folder."""
    name = promo.proposal_name
    folder = out_dir / name.replace("_", "-")
    if folder.exists() and any(folder.iterdir()):
        raise LedgerRecordError(f"{folder} exists and is not empty: export into a new folder")
    try:
        _, envelope_sha = find_attestation(ctx.records, name, promo.version)
    except LookupError as err:
        raise LedgerRecordError(str(err)) from None
    public = home_public_key(ctx.home)
    if public is None:
        raise LedgerRecordError("this home has no signing key: its attestations cannot be exported")
    source = ctx.store.get(promo.source_sha256)
    card, _attested = attested_card(ctx, promo)
    spec = ctx.records.require_proposal(name).proposal
    description = " ".join(spec.description.split())
    front = {
        "name": name.replace("_", "-"),
        "description": description[:1024],
        "metadata": {"kavi-version": str(promo.version), "kavi-side-effect-class": str(promo.side_effect_class),
                     "kavi-source-sha256": promo.source_sha256, "kavi-origin": str(card["origin"]["kind"]),
                     "kavi-key-id": str(export_document({}, public)["key_id"])},
    }
    body = (card_markdown(card) + "\n## Running it\n\n"
            f"`python scripts/run.py '{{...}}'` runs `scripts/{name}.py` in Kavi Forge's contained runtime (a "
            "sandboxed worker with a deadline), after checking that the file is the one `attestation.json` vouches "
            "for (`kavi attest --verify attestation.json` checks the signature alone).\n")
    manifest = {"name": name, "version": promo.version, "side_effect_class": promo.side_effect_class,
                "source": f"scripts/{name}.py", "sha256": promo.source_sha256, "timeout_s": spec.timeout_s,
                "inputs": [f.model_dump(exclude_none=True) for f in spec.inputs],
                "outputs": [f.model_dump(exclude_none=True) for f in spec.outputs]}
    (folder / "scripts").mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text("---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
                                     + "---\n\n" + body, encoding="utf-8")
    (folder / "scripts" / f"{name}.py").write_bytes(source)
    (folder / "scripts" / "run.py").write_text(RUN_PY.format(name=name, version=promo.version), encoding="utf-8")
    envelope = json.loads(ctx.store.get(envelope_sha))
    (folder / ATTESTATION).write_text(json.dumps(export_document(envelope, public), indent=2) + "\n")
    (folder / "card.json").write_bytes(canonical(card))
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    # The per-gate Test Result statements and the VSA the attestation names, then the folder's own signature.
    predicate = json.loads(base64.b64decode(envelope["payload"]))["predicate"]
    evidence = predicate.get("evidence_statements") or {}
    named = {**dict(evidence.get("test_results") or {}), **({"vsa": evidence["vsa"]} if evidence.get("vsa") else {})}
    if named:
        (folder / "attestations").mkdir()
        for label, sha in named.items():
            (folder / "attestations" / f"{label}.json").write_bytes(ctx.store.get(str(sha)))
    sign_folder(folder, folder_key(ctx.home))
    return folder
