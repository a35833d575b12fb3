"""`kavi export --format agent-skill`: a trusted version as an Agent Skills folder, with its evidence and proof.

The folder holds SKILL.md (the standard frontmatter; the skill card in its body), scripts/<name>.py (the trusted
bytes, unchanged), scripts/run.py (a command-line entry that runs it through the contained runtime after checking
the attestation: kavi.promotion.exported), attestation.json (the signed in-toto statement with its public key),
card.json and kavi.json (the manifest the entry reads), attestations/ (an in-toto Test Result statement per gate
and the SLSA VSA), and model.sig with model-signing.pub (the folder signed in the OpenSSF Model Signing format).
"""

import json
from pathlib import Path

import yaml

from kavi.forge.attempt import canonical
from kavi.forge.card import attested_card, card_markdown
from kavi.forge.context import ForgeContext
from kavi.forge.provenance import statement_texts
from kavi.ledger.records import LedgerRecordError, PromotionRow
from kavi.promotion.attestation import export_document, home_public_key, signed_predicate
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


def skill_folder_files(ctx: ForgeContext, promo: PromotionRow) -> dict[str, bytes]:
    """Every file of NAME@V's Agent Skills folder but its folder signature, by relative path."""
    name = promo.proposal_name
    try:
        _, envelope_sha = find_attestation(ctx.records, name, promo.version)
    except LookupError as err:
        raise LedgerRecordError(str(err)) from None
    public = home_public_key(ctx.home)
    if public is None:
        raise LedgerRecordError("this home has no signing key: its attestations cannot be exported")
    card, _attested = attested_card(ctx, promo)
    spec = ctx.records.require_proposal(name).proposal
    front = {
        "name": name.replace("_", "-"),
        "description": " ".join(spec.description.split())[:1024],
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
    envelope = json.loads(ctx.store.get(envelope_sha))
    files = {
        "SKILL.md": ("---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\n" + body).encode(),
        f"scripts/{name}.py": ctx.store.get(promo.source_sha256),
        "scripts/run.py": RUN_PY.format(name=name, version=promo.version).encode(),
        ATTESTATION: (json.dumps(export_document(envelope, public), indent=2) + "\n").encode(),
        "card.json": canonical(card),
        MANIFEST: (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode(),
    }
    # The per-gate Test Result statements and the VSA the attestation names.
    evidence = signed_predicate(envelope).get("evidence_statements") or {}
    for label, text in statement_texts(ctx, evidence).items():
        files[f"attestations/{label}.json"] = text.encode()
    return files


def export_agent_skill(ctx: ForgeContext, promo: PromotionRow, out_dir: Path) -> Path:
    """Write NAME@V as an Agent Skills folder under `out_dir` (its name hyphenated), signed; returns the folder."""
    folder = out_dir / promo.proposal_name.replace("_", "-")
    if folder.exists() and any(folder.iterdir()):
        raise LedgerRecordError(f"{folder} exists and is not empty: export into a new folder")
    for rel, data in skill_folder_files(ctx, promo).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    sign_folder(folder, folder_key(ctx.home))
    return folder
