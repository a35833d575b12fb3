"""A fresh sandbox directory per build id, written without following links and never reused."""

import os
from collections.abc import Mapping
from pathlib import Path


class SandboxExistsError(RuntimeError):
    """A sandbox for this build id already exists: build ids are never reused."""


def create_sandbox(root: Path, build_id: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / build_id
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        raise SandboxExistsError(f"sandbox {path} already exists; a build id is used once") from None
    return path


def write_files(base: Path, files: Mapping[str, bytes], *, in_place: bool = False) -> None:
    """Write allowlisted files under `base`; O_EXCL|O_NOFOLLOW so nothing pre-existing or linked is touched.
    `in_place`: a file already there (not a link) is truncated and written, keeping its inode (the placeholders a
    held gate job's sandbox bound, kavi.sandbox.held)."""
    exclusive = os.O_TRUNC if in_place else os.O_EXCL
    for rel, data in files.items():
        target = base / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.parent.is_symlink() or not target.parent.resolve().is_relative_to(base.resolve()):
            raise PermissionError(f"refusing to write {rel}: its directory leaves the sandbox")
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | exclusive | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
