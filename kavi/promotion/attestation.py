"""Signed provenance: each promotion's in-toto Statement (subject: the skill's bytes; predicate: the proposal's
hash, every gate verdict with the fingerprint that judged it, the builder model, the coach, the approver), in a DSSE
envelope signed with the home's Ed25519 key. Stored as a content-addressed artifact and linked from the ledger.

The key is created by the home on first use: `keys/attestation.key` (PKCS#8 PEM, mode 0600, written with O_EXCL so
a second process never overwrites it) and `keys/attestation.pub`. An exported attestation carries the public key, so
another machine can check the signature with no access to this home; which key to believe is the reader's decision
(`kavi attest --verify FILE --key PUB` pins it).
"""

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kavi.home import KaviHome

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
PREDICATE_TYPE = "urn:kavi-forge:promotion:v1"
EXPORT_KIND = "KAVI_ATTESTATION"
# An exported file is read whole: bound it before parsing (a statement is a few kilobytes).
MAX_EXPORT_BYTES = 1_000_000


class AttestationError(ValueError):
    """An attestation that cannot be verified: malformed, a bad signature, or the wrong key."""


def key_dir(home: KaviHome) -> Path:
    return home.root / "keys"


def _pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what is signed binds the payload to its type."""
    t = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:32]


def public_pem(public: Ed25519PublicKey) -> str:
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def load_public_pem(text: str) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(text.encode())
    except (ValueError, TypeError) as err:
        raise AttestationError(f"not a PEM public key: {err}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise AttestationError("the public key is not an Ed25519 key")
    return key


def signing_key(home: KaviHome) -> Ed25519PrivateKey:
    """The home's signing key, created on first use (private file 0600, inside the home)."""
    d = key_dir(home)
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    private_path, public_path = d / "attestation.key", d / "attestation.pub"
    if not private_path.exists():
        key = Ed25519PrivateKey.generate()
        data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
        # Written whole under a private name, then published with link(): a concurrent process sees either no key
        # or a complete one, and of two processes creating it at once, the first link wins and both use it.
        tmp = d / f".attestation.key.{os.getpid()}.{os.urandom(4).hex()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, private_path)
        except FileExistsError:
            pass  # another process published its key first: use theirs
        else:
            public_path.write_text(public_pem(key.public_key()))
        finally:
            tmp.unlink(missing_ok=True)
    st = private_path.lstat()
    if not private_path.is_file() or private_path.is_symlink():
        raise AttestationError(f"{private_path} is not a regular file")
    if st.st_mode & 0o077:
        raise AttestationError(f"{private_path} is readable by others (mode {st.st_mode & 0o777:o}); "
                               f"chmod 600 {private_path}")
    loaded = serialization.load_pem_private_key(private_path.read_bytes(), password=None)
    if not isinstance(loaded, Ed25519PrivateKey):
        raise AttestationError(f"{private_path} is not an Ed25519 private key")
    if not public_path.exists():
        public_path.write_text(public_pem(loaded.public_key()))
    return loaded


def home_public_key(home: KaviHome) -> Ed25519PublicKey | None:
    path = key_dir(home) / "attestation.pub"
    if not path.is_file():
        return None
    return load_public_pem(path.read_text())


def statement(*, subject_name: str, source_sha256: str, predicate: dict[str, Any]) -> dict[str, Any]:
    return {"_type": STATEMENT_TYPE, "subject": [{"name": subject_name, "digest": {"sha256": source_sha256}}],
            "predicateType": PREDICATE_TYPE, "predicate": predicate}


def signed_predicate(envelope: dict[str, Any]) -> dict[str, Any]:
    """The predicate of an envelope this home stored itself (read, not verified: verify_envelope checks one from
    elsewhere)."""
    predicate: dict[str, Any] = json.loads(base64.b64decode(envelope["payload"]))["predicate"]
    return predicate


def sign(stmt: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    payload = json.dumps(stmt, sort_keys=True, separators=(",", ":"), default=str).encode()
    sig = key.sign(_pae(PAYLOAD_TYPE, payload))
    return {"payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(payload).decode(),
            "signatures": [{"keyid": key_id(key.public_key()), "sig": base64.b64encode(sig).decode()}]}


@dataclass(frozen=True)
class Verified:
    statement: dict[str, Any]
    key_id: str

    @property
    def subject_sha256(self) -> str:
        return str(self.statement["subject"][0]["digest"]["sha256"])


def verify_envelope(envelope: Any, public: Ed25519PublicKey) -> Verified:
    """Check the envelope's signature with `public` and return its statement; AttestationError otherwise."""
    if not isinstance(envelope, dict) or envelope.get("payloadType") != PAYLOAD_TYPE:
        raise AttestationError("not a DSSE envelope of an in-toto statement")
    sigs = envelope.get("signatures")
    if not isinstance(sigs, list) or not sigs or not all(isinstance(s, dict) for s in sigs):
        raise AttestationError("the envelope carries no signature")
    try:
        payload = base64.b64decode(str(envelope.get("payload", "")), validate=True)
    except (binascii.Error, ValueError):
        raise AttestationError("the payload is not base64") from None
    want = key_id(public)
    for s in sigs:
        try:
            sig = base64.b64decode(str(s.get("sig", "")), validate=True)
        except (binascii.Error, ValueError):
            continue
        try:
            public.verify(sig, _pae(PAYLOAD_TYPE, payload))
        except InvalidSignature:
            continue
        try:
            stmt = json.loads(payload)
        except ValueError:
            raise AttestationError("the signed payload is not JSON") from None
        if not (isinstance(stmt, dict) and stmt.get("_type") == STATEMENT_TYPE and isinstance(stmt.get("subject"), list)
                and stmt["subject"] and isinstance(stmt["subject"][0].get("digest"), dict)):
            raise AttestationError("the signed payload is not an in-toto statement with a subject")
        return Verified(stmt, want)
    raise AttestationError(f"no valid signature by key {want} (the attestation was altered, or signed by another "
                           "key)")


def export_document(envelope: dict[str, Any], public: Ed25519PublicKey) -> dict[str, Any]:
    return {"kind": EXPORT_KIND, "envelope": envelope, "public_key": public_pem(public), "key_id": key_id(public)}


def verify_export(data: bytes, pinned: Ed25519PublicKey | None = None) -> Verified:
    """Verify an exported attestation: with the key it carries, or with `pinned` (which it must then match)."""
    if len(data) > MAX_EXPORT_BYTES:
        raise AttestationError(f"the file is {len(data)} bytes; an attestation is at most {MAX_EXPORT_BYTES}")
    try:
        doc = json.loads(data)
    except ValueError:
        raise AttestationError("the file is not JSON") from None
    if not isinstance(doc, dict) or doc.get("kind") != EXPORT_KIND:
        raise AttestationError(f"the file is not an exported attestation (kind {EXPORT_KIND})")
    carried = load_public_pem(str(doc.get("public_key", "")))
    if pinned is not None and key_id(pinned) != key_id(carried):
        raise AttestationError(f"the attestation carries key {key_id(carried)}, not the pinned key {key_id(pinned)}")
    return verify_envelope(doc.get("envelope"), pinned or carried)
