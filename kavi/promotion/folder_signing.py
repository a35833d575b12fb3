"""An exported folder signed in the OpenSSF Model Signing format (the `model-signing` library, key-based), so that
`model_signing verify key --signature model.sig --public_key model-signing.pub FOLDER` checks it on any machine.

Its key-based signer takes elliptic-curve keys, so the home keeps an ECDSA P-256 key for it beside the Ed25519 key
that signs the attestations (which stays the default signer of everything else).
"""

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kavi.home import KaviHome
from kavi.promotion.attestation import key_dir

SIGNATURE = "model.sig"
PUBLIC_KEY = "model-signing.pub"


class FolderSignatureError(RuntimeError):
    """The folder's Model Signing signature does not hold; the message says what differs."""


def folder_key(home: KaviHome) -> Path:
    """The home's P-256 key for folder signatures (created, readable by its owner only, on first use)."""
    path = key_dir(home) / "model-signing-p256.pem"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
    return path


def public_pem(private_path: Path) -> bytes:
    key = serialization.load_pem_private_key(private_path.read_bytes(), password=None)
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def sign_folder(folder: Path, private_path: Path) -> Path:
    """Write the folder's public key, then sign every file of the folder into `model.sig`."""
    import model_signing

    (folder / PUBLIC_KEY).write_bytes(public_pem(private_path))
    signature = folder / SIGNATURE
    signer = model_signing.signing.Config()  # type: ignore[no-untyped-call]
    signer.use_elliptic_key_signer(private_key=private_path).sign(folder, signature)
    return signature


def verify_folder(folder: Path, public_key: Path | None = None) -> None:
    """Check `model.sig` over the folder with `public_key` (default: the one the folder carries)."""
    import model_signing
    from model_signing import hashing

    signature = folder / SIGNATURE
    if not signature.exists():
        raise FolderSignatureError(f"{folder.name} has no {SIGNATURE}")
    hashing_config = hashing.Config().set_ignored_paths(  # type: ignore[no-untyped-call]
        paths=[signature], ignore_git_paths=True)
    verifier = model_signing.verifying.Config()  # type: ignore[no-untyped-call]
    try:
        (verifier.use_elliptic_key_verifier(public_key=public_key or folder / PUBLIC_KEY)
         .set_hashing_config(hashing_config).verify(folder, signature))
    except ValueError as err:
        raise FolderSignatureError(str(err)[:500]) from None
