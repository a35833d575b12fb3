"""Running a skill exported as an Agent Skills folder (`kavi export --format agent-skill`), on any machine with
kavi-forge installed: the folder's `scripts/run.py` calls `main`.

Nothing runs unless the folder still holds what was attested: the skill file's sha256 must be the attestation's
subject and the attestation's signature must hold with the key the folder carries (integrity; `kavi attest --verify
FOLDER --key PUB` checks origin against a key you expect). The skill then runs in the contained runtime (a sandboxed
worker, its deadline enforced), never in this process.
"""

import hashlib
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from kavi.promotion.attestation import AttestationError, load_public_pem, verify_export
from kavi.runtime.broker import Broker
from kavi.runtime.worker import one_call_pool, run_contained, sandbox_problem
from kavi.skills.base import SkillContext

MANIFEST = "kavi.json"
ATTESTATION = "attestation.json"


class ExportError(RuntimeError):
    """The folder does not hold what its attestation says, or cannot be run here; the message says which."""


def check_folder(folder: Path, pinned_pem: str | None = None) -> tuple[dict[str, Any], bytes]:
    """The manifest and the skill's bytes, once the attestation vouches for them; ExportError otherwise."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        data = (folder / str(manifest["source"])).read_bytes()
        exported = (folder / ATTESTATION).read_bytes()
    except (OSError, KeyError, ValueError) as err:
        raise ExportError(f"{folder.name}: not an exported skill folder ({err})") from None
    digest = hashlib.sha256(data).hexdigest()
    try:
        verified = verify_export(exported, load_public_pem(pinned_pem) if pinned_pem else None)
    except AttestationError as err:
        raise ExportError(f"{folder.name}: the attestation does not hold: {err}") from None
    if verified.subject_sha256 != digest:
        raise ExportError(f"{folder.name}: {manifest['source']} (sha256 {digest[:16]}) is not the attested skill "
                          f"(sha256 {verified.subject_sha256[:16]}): it was changed after export")
    if manifest.get("sha256") != digest:
        raise ExportError(f"{folder.name}: the manifest names another skill file (sha256 mismatch)")
    return manifest, data


def main(folder: Path, argv: list[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """`python scripts/run.py '{"field": ...}'` (or the input on stdin): the output JSON, exit 0; else 1."""
    try:
        manifest, data = check_folder(folder)
        raw = argv[0] if argv else sys.stdin.read()
        try:
            input_data = json.loads(raw)
        except ValueError:
            raise ExportError("the input is not JSON (one object: the skill's input fields)") from None
        if not isinstance(input_data, dict):
            raise ExportError("the input must be a JSON object of the skill's input fields")
        if str(manifest.get("side_effect_class")) != "READ_ONLY":
            raise ExportError(f"{manifest['name']} is {manifest.get('side_effect_class')}: an exported folder runs "
                              "READ_ONLY skills (the others need the handles of a skills home: kavi run)")
        problem = sandbox_problem()
        if problem is not None:
            raise ExportError(f"the contained runtime cannot be built here: {problem}")
    except ExportError as exc:
        print(f"error: {exc}", file=err)
        return 1
    worker = one_call_pool().take()
    outcome = run_contained(worker, name=str(manifest["name"]), data=data, digest=str(manifest["sha256"]),
                            side_effect_class="READ_ONLY", input_data=input_data, broker=Broker(SkillContext()),
                            deadline_s=float(manifest.get("timeout_s") or 10.0))
    if not outcome.ok:
        print(f"error: {outcome.error}", file=err)
        return 1
    print(outcome.output, file=out)
    return 0


def verify_folder_evidence(folder: Path, pinned_pem: str | None = None,
                           folder_public_key: Path | None = None) -> list[tuple[str, bool, str]]:
    """Every check of an exported folder, (what, held, detail): the attestation and the skill's bytes, each Test
    Result statement and the VSA (signed by the same key, about the same bytes, the VSA naming each Test Result by
    its digest), and the folder's Model Signing signature."""
    from kavi.promotion.attestation import verify_envelope
    from kavi.promotion.folder_signing import FolderSignatureError, verify_folder
    from kavi.promotion.statements import TEST_RESULT_TYPE, VSA_TYPE

    checks: list[tuple[str, bool, str]] = []
    try:
        manifest, data = check_folder(folder, pinned_pem)
        checks.append(("attestation.json and the skill's bytes", True, f"{manifest['name']}@{manifest['version']} "
                       f"sha256 {manifest['sha256'][:16]}"))
    except ExportError as err:
        checks.append(("attestation.json and the skill's bytes", False, str(err)))
        try:  # the other checks still say what they find
            manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            data = (folder / str(manifest["source"])).read_bytes()
        except (OSError, KeyError, ValueError):
            return checks
    try:
        doc = json.loads((folder / ATTESTATION).read_bytes())
    except (OSError, ValueError):
        return checks
    public = load_public_pem(pinned_pem or str(doc["public_key"]))
    digest = hashlib.sha256(data).hexdigest()
    files = sorted((folder / "attestations").glob("*.json")) if (folder / "attestations").is_dir() else []
    shas = {p.stem: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    vsa_inputs: dict[str, str] = {}
    for p in files:
        try:
            stmt = verify_envelope(json.loads(p.read_bytes()), public).statement
        except (AttestationError, ValueError) as err:
            checks.append((f"attestations/{p.name}", False, str(err)))
            continue
        if stmt["subject"][0]["digest"].get("sha256") != digest:
            checks.append((f"attestations/{p.name}", False, "its subject is not the skill's bytes"))
            continue
        kind = stmt.get("predicateType")
        if kind == VSA_TYPE:
            pred = stmt["predicate"]
            vsa_inputs = {str(i["uri"]).rsplit("/", 1)[-1].removesuffix(".json"): str(i["digest"]["sha256"])
                          for i in pred.get("inputAttestations") or []}
            checks.append((f"attestations/{p.name}", True, f"SLSA VSA {pred.get('verificationResult')}, policy "
                           f"sha256 {str(pred['policy']['digest']['sha256'])[:16]}"))
        elif kind == TEST_RESULT_TYPE:
            checks.append((f"attestations/{p.name}", True, f"in-toto Test Result {stmt['predicate']['result']}"))
        else:
            checks.append((f"attestations/{p.name}", False, f"an unexpected statement type {kind!r}"))
    if files:
        missing = sorted(n for n, d in vsa_inputs.items() if shas.get(n) != d)
        checks.append(("the VSA's input attestations", not missing and bool(vsa_inputs),
                       f"{len(vsa_inputs)} named, each file matching its digest" if not missing and vsa_inputs
                       else f"missing or changed: {', '.join(missing) or 'no VSA'}"))
    try:
        verify_folder(folder, folder_public_key)
        checks.append(("model.sig (OpenSSF Model Signing)", True, "every file of the folder as signed"))
    except FolderSignatureError as err:
        checks.append(("model.sig (OpenSSF Model Signing)", False, str(err)))
    return checks
