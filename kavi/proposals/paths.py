"""Vault-relative paths from untrusted text (a proposal's fixture files): checked, then resolved inside a root.

Pure and import-light: the acceptance runner imports it inside the sandbox.
"""

import os
import re
import stat
import unicodedata
from collections.abc import Iterable
from pathlib import Path

MAX_VAULT_PATH_CHARS = 255
MAX_VAULT_PATH_COMPONENTS = 16
MAX_COMPONENT_BYTES = 255  # NAME_MAX on Linux and most file systems

_DRIVE = re.compile(r"[A-Za-z]:")


def _shown(rel: str) -> str:
    return repr(rel) if len(rel) <= MAX_VAULT_PATH_CHARS else f"{rel[:60]!r}... ({len(rel)} characters)"


def check_vault_relpath(rel: str) -> str:
    """Return `rel` if it is a plain relative path inside a vault; raise ValueError saying why not.

    Refused: non-strings, empty paths, absolute paths, `~`, drive letters, backslashes, NUL and other control
    or format characters, empty, '.' and '..' components, and paths longer than the bounds above. Accepted
    paths are already normal (no component to drop), so the text is the path.
    """
    if not isinstance(rel, str):
        raise ValueError(f"vault path {rel!r} is not a string")
    shown = _shown(rel)
    if not rel:
        raise ValueError("vault path '' is empty")
    if len(rel) > MAX_VAULT_PATH_CHARS:
        raise ValueError(f"vault path {shown} is too long: at most {MAX_VAULT_PATH_CHARS} characters")
    if "\x00" in rel:
        raise ValueError(f"vault path {shown} contains a NUL character")
    bad = next((ch for ch in rel if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")), None)
    if bad is not None:
        raise ValueError(f"vault path {shown} contains the control character U+{ord(bad):04X}")
    if "\\" in rel:
        raise ValueError(f"vault path {shown} contains a backslash; use '/' between components")
    if rel.startswith("/"):
        raise ValueError(f"vault path {shown} is absolute; give a path relative to the vault")
    if rel.startswith("~"):
        raise ValueError(f"vault path {shown} starts with '~' (a home directory); give a path relative to the vault")
    if _DRIVE.match(rel):
        raise ValueError(f"vault path {shown} starts with a drive letter; give a path relative to the vault")
    parts = rel.split("/")
    if ".." in parts:
        raise ValueError(f"vault path {shown} contains '..'; paths may not climb out of the vault")
    if "." in parts:
        raise ValueError(f"vault path {shown} contains a '.' component; write the path without it")
    if "" in parts:
        raise ValueError(f"vault path {shown} has an empty component (a doubled or trailing '/')")
    if len(parts) > MAX_VAULT_PATH_COMPONENTS:
        raise ValueError(f"vault path {shown} is too long: at most {MAX_VAULT_PATH_COMPONENTS} components")
    for part in parts:
        if len(part.encode("utf-8")) > MAX_COMPONENT_BYTES:
            raise ValueError(f"vault path {shown} has a component that is too long: at most "
                             f"{MAX_COMPONENT_BYTES} bytes")
    return rel


def check_vault_relpaths(rels: Iterable[str]) -> list[str]:
    """Check every path, and that no path is both a file and the directory of another."""
    checked = [check_vault_relpath(rel) for rel in rels]
    files = set(checked)
    for rel in checked:
        parts = rel.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent in files:
                raise ValueError(f"vault path {parent!r} is both a file and a directory (of {rel!r})")
    return checked


def resolve_inside(root: Path, rel: str) -> Path:
    """The absolute path of `rel` under `root`, after checking `rel` and every existing component on the way.

    Raises ValueError when `rel` is not a plain relative path, when an existing component is a symbolic link
    (wherever it points), or when the result is not inside the resolved root. Components that do not exist yet
    are fine: the caller creates them (and nothing else can be in the way of a fresh directory).
    """
    check_vault_relpath(rel)
    base = Path(root).resolve()
    current = base
    for i, part in enumerate(rel.split("/")):
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode):
            shown = "/".join(rel.split("/")[: i + 1])
            raise ValueError(f"vault path {rel!r}: {shown!r} is a symbolic link; links are refused")
    resolved = current.resolve()
    if resolved != base and base not in resolved.parents:
        raise ValueError(f"vault path {rel!r} resolves outside the vault")
    return current
