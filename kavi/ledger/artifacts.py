"""Content-addressed artifact files: `<home>/artifacts/sha256/ab/<hash>`, written once, never overwritten."""

import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path


class ArtifactCorruptError(RuntimeError):
    """A stored artifact no longer hashes to its name."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ArtifactRef:
    sha256: str
    kind: str
    size: int
    path: Path
    # When the `put` that returned this ref created the file (UTC), else None. The ledger records an artifact only
    # after its file is stored, so any row or lineage edge of it is younger than this: the ledger looks for one
    # among recent rows only, not through tables that grow with every attempt.
    stored_at: datetime | None = field(default=None, compare=False)


class ArtifactStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, digest: str) -> Path:
        return self.root / "sha256" / digest[:2] / digest

    def put(self, data: bytes, kind: str) -> ArtifactRef:
        """Store `data` under its hash. Identical content is stored once; an existing file is never rewritten."""
        digest = sha256_bytes(data)
        target = self.path_for(digest)
        if target.exists():
            return ArtifactRef(digest, kind, len(data), target)
        target.parent.mkdir(parents=True, exist_ok=True)
        # A second of slack: the ledger's timestamps may come from another process's clock reading.
        before = datetime.now(UTC) - timedelta(seconds=1)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o444)
            # link() fails if the name exists, so a racing writer can never replace stored bytes.
            stored_at: datetime | None = before
            try:
                os.link(tmp, target)
            except FileExistsError:
                stored_at = None
        finally:
            os.unlink(tmp)
        return ArtifactRef(digest, kind, len(data), target, stored_at=stored_at)

    def get(self, digest: str) -> bytes:
        data = self.path_for(digest).read_bytes()
        if sha256_bytes(data) != digest:
            raise ArtifactCorruptError(f"artifact {digest} does not match its content hash")
        return data

    def exists(self, digest: str) -> bool:
        return self.path_for(digest).is_file()
