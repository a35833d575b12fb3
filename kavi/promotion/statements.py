"""The evidence of a promotion in the formats others check: an in-toto Test Result statement per gate, and a SLSA
Verification Summary (VSA) for the version, each bound to the gate configuration, the tool versions and the policy
digest of the verification (its judge fingerprint). Both are in-toto v1 statements about the skill's bytes, signed
as DSSE envelopes with the home's key like the promotion's own attestation."""

from datetime import UTC, datetime
from typing import Any

from kavi.promotion.attestation import STATEMENT_TYPE

TEST_RESULT_TYPE = "https://in-toto.io/attestation/test-result/v0.1"
VSA_TYPE = "https://slsa.dev/verification_summary/v1"
VERIFIER_ID = "https://kavi-forge.invalid/verifier/gates"  # the forge's gates as the verifier (no hosted service)
_RESULT = {"passed": "PASSED", "failed": "FAILED", "omitted": "WARNED"}


def _subject(name: str, sha256: str) -> list[dict[str, Any]]:
    return [{"name": name, "digest": {"sha256": sha256}}]


def _configuration(fingerprint: dict[str, Any] | None, fingerprint_digest: str | None) -> list[dict[str, Any]]:
    if not fingerprint_digest:
        return []
    return [{"name": "kavi gate configuration, tool versions and policy", "digest": {"sha256": fingerprint_digest},
             "annotations": fingerprint or {}}]


def test_result_statement(subject_name: str, sha256: str, gate: dict[str, Any], *,
                          fingerprint: dict[str, Any] | None, fingerprint_digest: str | None) -> dict[str, Any]:
    """One gate's verdict on the skill's bytes as an in-toto Test Result (v0.1)."""
    verdict = str(gate.get("effective_verdict") or gate.get("verdict"))
    name = f"gate/{gate['gate']}"
    return {"_type": STATEMENT_TYPE, "subject": _subject(subject_name, sha256), "predicateType": TEST_RESULT_TYPE,
            "predicate": {"result": _RESULT.get(verdict, "FAILED"),
                          "configuration": _configuration(fingerprint, fingerprint_digest),
                          "passedTests": [name] if verdict == "passed" else [],
                          "warnedTests": [f"{name}: {str(gate.get('reason'))[:300]}"] if verdict == "omitted" else [],
                          "failedTests": [name] if verdict not in ("passed", "omitted") else []}}


def vsa_statement(subject_name: str, sha256: str, *, passed: bool, fingerprint: dict[str, Any] | None,
                  fingerprint_digest: str | None, inputs: dict[str, str], resource_uri: str,
                  verified_at: datetime | None = None) -> dict[str, Any]:
    """The version's SLSA Verification Summary: the forge's gates verified these bytes against this policy;
    `inputs` (name → sha256 of each Test Result envelope) are its input attestations."""
    parts = fingerprint or {}
    tools = {k: str(v) for k, v in sorted(parts.items()) if k not in ("gates", "policy")}
    return {"_type": STATEMENT_TYPE, "subject": _subject(subject_name, sha256), "predicateType": VSA_TYPE,
            "predicate": {
                "verifier": {"id": VERIFIER_ID, "version": tools},
                "timeVerified": (verified_at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "resourceUri": resource_uri,
                "policy": {"uri": "urn:kavi-forge:policy", "digest": {"sha256": str(parts.get("policy") or "")}},
                "inputAttestations": [{"uri": f"attestations/{n}.json", "digest": {"sha256": d}}
                                      for n, d in sorted(inputs.items())],
                "verificationResult": "PASSED" if passed else "FAILED",
                "verifiedLevels": ["KAVI_GATES_PASSED"] if passed else [],
                "slsaVersion": "1.0",
                "configuration": _configuration(fingerprint, fingerprint_digest)}}
