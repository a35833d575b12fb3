"""Each promotion writes an in-toto statement signed with the home's Ed25519 key; `kavi verify`
checks every signature; `kavi attest` exports one that another machine verifies. Real signatures: a flipped byte
fails, a different key fails."""

import base64
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.ledger.artifacts import ArtifactStore
from kavi.ledger.verification_records import VerificationRecords
from kavi.promotion.attestation import (
    AttestationError,
    home_public_key,
    key_dir,
    public_pem,
    sign,
    verify_envelope,
    verify_export,
)
from kavi.promotion.provenance import check_attestations, find_attestation
from kavi_assets.cli.main import app
from tests.factories import forge_ctx, trust_version

runner = CliRunner()


def _kavi(args: list[str]) -> Any:
    res = runner.invoke(app, args)
    assert "Traceback" not in res.output, res.output
    return res


def _export(home: KaviHome, tmp_path: Path, ref: str = "word_count@1") -> Path:
    out = tmp_path / "word_count.attestation.json"
    res = _kavi(["attest", ref, "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_a_promotion_is_attested_and_signed_by_the_homes_key(kavi_home: KaviHome) -> None:
    build_id = trust_version(kavi_home, coach=True)
    ctx = forge_ctx(kavi_home, evidence_levels=())
    promo, sha = find_attestation(ctx.records, "word_count", 1)
    private = key_dir(kavi_home) / "attestation.key"
    assert private.is_file() and stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.resolve().is_relative_to(kavi_home.root)
    public = home_public_key(kavi_home)
    assert public is not None
    verified = verify_envelope(json.loads(ctx.store.get(sha)), public)
    stmt = verified.statement
    assert stmt["_type"] == "https://in-toto.io/Statement/v1"
    assert stmt["subject"][0]["digest"]["sha256"] == promo.source_sha256
    pred = stmt["predicate"]
    assert pred["proposal"]["spec_sha256"] == ctx.records.require_proposal("word_count").spec_sha256
    assert pred["builder"] == {"build_id": build_id, "attempt": 1, "model": "builder-m", "endpoint": "e"}
    assert pred["approver"]["approved_by"] == "ada"
    assert {g["gate"] for g in pred["verification"]["gates"]} >= {"ruff", "mypy", "pytest", "policy", "coach"}
    assert pred["coach"]["verdict"] == "passed" and pred["coach"]["details"] == {"coach_model": "coach-m"}
    assert pred["promotion"]["record_hash"] == promo.record_hash
    # One promotion's row, read alone, is the one the table gives for it.
    links = VerificationRecords(ctx.records.ledger)
    own = links.attestation(promo.seq)
    assert own is not None and own == links.attestations()[promo.seq] and own[0] == sha
    assert links.attestation(promo.seq + 1) is None
    res = _kavi(["verify"])
    assert res.exit_code == 0 and "1 signed attestations verified" in res.output, res.output


def test_without_a_coach_review_the_coach_is_null(kavi_home: KaviHome) -> None:
    trust_version(kavi_home, coach=False)
    ctx = forge_ctx(kavi_home, evidence_levels=())
    _, sha = find_attestation(ctx.records, "word_count", None)
    public = home_public_key(kavi_home)
    assert public is not None
    assert verify_envelope(json.loads(ctx.store.get(sha)), public).statement["predicate"]["coach"] is None


def test_an_export_verifies_on_another_machine_and_a_flipped_byte_does_not(
        kavi_home: KaviHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trust_version(kavi_home, coach=False)
    out = _export(kavi_home, tmp_path)
    pub = tmp_path / "forge.pub"
    pub.write_text((key_dir(kavi_home) / "attestation.pub").read_text())
    # Another machine: an empty home of its own.
    monkeypatch.setenv("KAVI_HOME", str(tmp_path / "elsewhere"))
    ok = _kavi(["attest", "--verify", str(out), "--key", str(pub)])
    assert ok.exit_code == 0 and "signature valid" in ok.output and "word_count@1" in ok.output, ok.output

    doc = json.loads(out.read_text())
    payload = bytearray(base64.b64decode(doc["envelope"]["payload"]))
    payload[payload.index(b'"ada"') + 1] ^= 0x01  # the approver's name, one bit
    doc["envelope"]["payload"] = base64.b64encode(bytes(payload)).decode()
    flipped = tmp_path / "flipped.json"
    flipped.write_text(json.dumps(doc))
    bad = _kavi(["attest", "--verify", str(flipped)])
    assert bad.exit_code == 1 and "no valid signature" in bad.output
    with pytest.raises(AttestationError):
        verify_export(flipped.read_bytes())


def test_a_different_key_fails(kavi_home: KaviHome, tmp_path: Path) -> None:
    trust_version(kavi_home, coach=False)
    out = _export(kavi_home, tmp_path)
    doc = json.loads(out.read_text())
    other = Ed25519PrivateKey.generate()
    # Pinned to another key: refused, though the file's own key would verify it.
    other_pub = tmp_path / "other.pub"
    other_pub.write_text(public_pem(other.public_key()))
    pinned = _kavi(["attest", "--verify", str(out), "--key", str(other_pub)])
    assert pinned.exit_code == 1 and "not the pinned key" in pinned.output
    # The statement re-signed by another key but still carrying the forge's public key: the signature fails.
    stmt = json.loads(base64.b64decode(doc["envelope"]["payload"]))
    doc["envelope"] = sign(stmt, other)
    resigned = tmp_path / "resigned.json"
    resigned.write_text(json.dumps(doc))
    assert _kavi(["attest", "--verify", str(resigned)]).exit_code == 1
    # kavi verify with the home's public key replaced: every signature fails.
    (key_dir(kavi_home) / "attestation.pub").write_text(public_pem(other.public_key()))
    res = _kavi(["verify"])
    assert res.exit_code == 1 and "does not verify" in res.output


def test_kavi_verify_reports_an_altered_or_missing_attestation(kavi_home: KaviHome) -> None:
    trust_version(kavi_home, coach=False)
    ctx = forge_ctx(kavi_home, evidence_levels=())
    _, sha = find_attestation(ctx.records, "word_count", 1)
    path = ArtifactStore(kavi_home.artifacts_dir).path_for(sha)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.chmod(0o644)
    path.write_bytes(bytes(data))
    check = check_attestations(ctx.records, ctx.store, kavi_home)
    assert check.checked == 0 and "altered" in check.problems[0]
    res = _kavi(["verify"])
    assert res.exit_code == 1 and "altered" in res.output
    with ctx.records.ledger.connect() as con:
        con.execute("DELETE FROM attestations")
    assert "no attestation is recorded" in check_attestations(ctx.records, ctx.store, kavi_home).problems[0]


def test_attest_refuses_bad_input(kavi_home: KaviHome, tmp_path: Path) -> None:
    assert _kavi(["attest"]).exit_code == 2
    assert _kavi(["attest", "../../etc/passwd"]).exit_code == 2
    assert _kavi(["attest", "word_count"]).exit_code == 2  # never promoted
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    assert _kavi(["attest", "--verify", str(junk)]).exit_code == 1
    assert _kavi(["attest", "--verify", str(tmp_path / "missing.json")]).exit_code == 2
