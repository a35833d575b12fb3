"""The skills home (KAVI_HOME): where skills, artifacts, sandboxes, the ledger and the vault live."""

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from kavi.settings import DEFAULT_HOME, KaviSettings, read_setting

__all__ = ["DEFAULT_HOME", "HomePathError", "KaviHome"]

# The room the forge sets aside in the home (KaviHome.keep_reserve), in two blocks: the forge's core gives one back at
# its first ENOSPC (to record the attempt as INFRASTRUCTURE), the CLI the other if Dagster's storage then fails too
# (to mark the run failed); a call's record uses one when it cannot be written otherwise.
RESERVES = 2


def _keep(path: Path, size: int) -> bool:
    try:
        if path.stat().st_size >= size:
            return True
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        os.posix_fallocate(fd, 0, size)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return False
    finally:
        os.close(fd)


class HomePathError(ValueError):
    """A path that would leave the skills home."""


@dataclass(frozen=True)
class KaviHome:
    root: Path

    @classmethod
    def from_env(cls, override: str | None = None, settings: "KaviSettings | None" = None) -> "KaviHome":
        """`override`, else the settings' home (KAVI_HOME; without settings, the variable alone), else ~/.kavi."""
        raw = override or (settings.home if settings is not None else read_setting("home")) or DEFAULT_HOME
        return cls(Path(raw).expanduser().resolve())

    @property
    def skills_dir(self) -> Path:
        return self.root / "skills"

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def artifacts_dir(self) -> Path:
        return self.root / "artifacts"

    @property
    def sandboxes_dir(self) -> Path:
        return self.root / "sandboxes"

    @property
    def vault_dir(self) -> Path:
        return self.root / "vault"

    @property
    def inbox_dir(self) -> Path:
        return self.root / "inbox"

    @property
    def rejected_dir(self) -> Path:
        return self.root / "inbox" / "rejected"

    @property
    def ledger_path(self) -> Path:
        return self.root / "ledger.duckdb"

    @property
    def registry_path(self) -> Path:
        return self.root / "registry.json"

    @property
    def executions_log(self) -> Path:
        return self.root / "executions.jsonl"

    @property
    def policy_path(self) -> Path:
        return self.root / "policy.yaml"

    def ensure(self) -> "KaviHome":
        for d in (
            self.root,
            self.skills_dir,
            self.tests_dir,
            self.artifacts_dir,
            self.sandboxes_dir,
            self.vault_dir,
            self.inbox_dir,
            self.rejected_dir,
        ):
            d.mkdir(parents=True, exist_ok=True)
        return self

    @property
    def reserve_paths(self) -> tuple[Path, ...]:
        return tuple(self.root / f".disk-reserve-{i}" for i in range(1, RESERVES + 1))

    def keep_reserve(self, size: int | None = None) -> bool:
        """Set RESERVES blocks of `size` bytes (KAVI_DISK_RESERVE_MB MiB each, 0: none) aside in the home, those
        missing; False when the disk has no room for them."""
        wanted = size if size is not None else int(read_setting("disk_reserve_mb")) << 20
        if wanted <= 0 or not self.root.is_dir():
            return wanted <= 0
        return all(_keep(path, wanted) for path in self.reserve_paths)

    def release_reserve(self) -> bool:
        """Give one block set aside back to the disk (a full disk was met); False when none is left."""
        for path in self.reserve_paths:
            try:
                path.unlink()
                return True
            except OSError:
                continue
        return False

    def inside(self, path: Path) -> Path:
        """Resolve `path` and refuse it unless it stays inside the home."""
        resolved = path.resolve()
        if not resolved.is_relative_to(self.root):
            raise HomePathError(f"{path} is outside the skills home {self.root}")
        return resolved

    def skill_file(self, name: str) -> Path:
        """Where an un-versioned trusted skill lived before schema 6 (such files stay, as version 1)."""
        return self.inside(self.skills_dir / f"{name}.py")

    def skill_version_file(self, name: str, version: int) -> Path:
        """The trusted file of NAME@VERSION: each version keeps its own file, written once at its promotion."""
        return self.inside(self.skills_dir / name / f"v{int(version)}.py")

    def skill_version_test_file(self, name: str, version: int) -> Path:
        return self.inside(self.tests_dir / name / f"test_v{int(version)}.py")

    def skill_test_file(self, name: str) -> Path:
        return self.inside(self.tests_dir / f"test_skill_{name}.py")
