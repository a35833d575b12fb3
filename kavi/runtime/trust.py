"""The trust loader: read a skill's bytes once, check them against the ledger's hash, execute exactly them.

No gap between check and use: the bytes hashed are the bytes compiled, never re-read through an import.
"""

import hashlib
import hmac
import os
import re
import stat
import sys
import threading
import types
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from kavi.runtime.errors import SkillLoadError, TrustError
from kavi.skills.base import BaseSkill, SideEffectClass
from kavi.skills.loading import exec_skill_module, module_name
from kavi.skills.source import SourceEncodingError

__all__ = [
    "LoaderStats",
    "SkillLoadError",
    "TrustError",
    "TrustLoader",
    "TrustedSkill",
    "default_loader",
    "find_skill_class",
    "load_trusted",
    "sha256_hex",
    "skill_module_name",
]

MAX_SKILL_BYTES = 2_000_000
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class TrustedSkill:
    """What the ledger says about one trusted skill; the runtime knows nothing else of the ledger."""

    name: str
    path: Path
    sha256: str
    side_effect_class: SideEffectClass
    required_secrets: tuple[str, ...] = ()
    input_schema: dict[str, Any] | None = None
    version: int | None = None  # the trusted version (None: a record that predates versions, or a test's)
    timeout_s: float | None = None  # the deadline its proposal asked for (None: the runtime's default)
    input_bounds: tuple[tuple[str, int], ...] = ()  # its proposal's inputs' max_size: (field, bound)

    @property
    def ref(self) -> str:
        return self.name if self.version is None else f"{self.name}@{self.version}"


@dataclass(frozen=True)
class LoaderStats:
    """How often the loader read and hashed a file, and how often it executed a module."""

    reads: int
    executions: int
    cached_modules: int


@dataclass(frozen=True)
class _Loaded:
    sha256: str
    module: types.ModuleType
    cls: type[BaseSkill[Any, Any]]


def _unregister(module: types.ModuleType) -> None:
    # Only our own entry: another loader may have registered a module of the same content since.
    if sys.modules.get(module.__name__) is module:
        del sys.modules[module.__name__]


def _unregister_all(cache: dict[tuple[str, str], _Loaded]) -> None:
    for loaded in cache.values():
        _unregister(loaded.module)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_once(path: Path) -> bytes:
    """Read the whole file through one descriptor; only regular files, bounded in size."""
    try:
        # O_NONBLOCK so a FIFO planted at the path cannot hang the open; it is refused just below.
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise TrustError(f"trusted skill file is missing: {path}") from None
    except OSError as exc:
        raise TrustError(f"cannot open trusted skill file {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TrustError(f"trusted skill path {path} is not a regular file")
        if st.st_size > MAX_SKILL_BYTES:
            raise TrustError(f"trusted skill file {path} is {st.st_size} bytes; the limit is {MAX_SKILL_BYTES}")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 16):
            total += len(chunk)
            if total > MAX_SKILL_BYTES:
                raise TrustError(f"trusted skill file {path} grew past the limit of {MAX_SKILL_BYTES} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def skill_module_name(skill_name: str, digest: str) -> str:
    """The `__name__` a skill's code runs under, wherever it runs: the acceptance gate and the runtime load a
    skill through the same function (`kavi.skills.loading`), so the code cannot tell being judged from
    being used. The hash suffix is that of the bytes, the same in a sandbox and in the skills home."""
    return module_name(skill_name, digest)


def find_skill_class(module: types.ModuleType, skill: TrustedSkill) -> type[BaseSkill[Any, Any]]:
    found = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, BaseSkill)
        and obj is not BaseSkill
        and obj.__module__ == module.__name__
    ]
    if len(found) != 1:
        names = ", ".join(c.__name__ for c in found) or "none"
        raise SkillLoadError(f"{skill.path} must define exactly one BaseSkill subclass, found {len(found)} ({names})")
    cls: type[BaseSkill[Any, Any]] = found[0]
    declared_name = getattr(cls, "name", None)
    if declared_name != skill.name:
        raise SkillLoadError(f"{skill.path}: class {cls.__name__} is named {declared_name!r}, expected {skill.name!r}")
    declared_class = getattr(cls, "side_effect_class", None)
    if declared_class != skill.side_effect_class:
        raise TrustError(
            f"{skill.path}: class {cls.__name__} declares side effects {declared_class!s}, "
            f"but the ledger trusted it as {skill.side_effect_class.value}"
        )
    for attr in ("input_model", "output_model"):
        model = getattr(cls, attr, None)
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise SkillLoadError(f"{skill.path}: {cls.__name__}.{attr} is not a pydantic model class")
    return cls


class TrustLoader:
    """Loads trusted skills, caching the class produced by executing bytes of a given hash.

    The cache never lets a load skip reading and hashing the file: every `load` reads the current bytes
    and compares their SHA-256 with the ledger's. The cache only skips re-executing bytes whose hash equals
    that of bytes this loader already executed for the same skill and path. That is why no stat-based key
    (inode, size, mtime) is used: such keys miss a same-size edit with its mtime restored, and reading a
    small file and hashing it costs a few microseconds.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str], _Loaded] = {}
        self._reads = 0
        self._executions = 0
        # A loader that goes away takes its modules out of sys.modules with it.
        weakref.finalize(self, _unregister_all, self._cache)

    @property
    def stats(self) -> LoaderStats:
        return LoaderStats(reads=self._reads, executions=self._executions, cached_modules=len(self._cache))

    def verify(self, skill: TrustedSkill) -> bytes:
        """Read the file once and return its bytes if their hash is the trusted one; else TrustError."""
        expected = skill.sha256.strip().lower()
        if not _HEX64.fullmatch(expected):
            raise TrustError(
                f"the trusted hash recorded for {skill.name!r} is not a SHA-256 hex digest: {skill.sha256!r}"
            )
        data = _read_once(Path(skill.path))
        self._reads += 1
        actual = sha256_hex(data)
        if not hmac.compare_digest(actual, expected):
            raise TrustError(
                f"hash mismatch for trusted skill {skill.name!r} at {skill.path}: "
                f"expected sha256 {expected}, file has {actual}; the skill was changed after promotion "
                "and will not run"
            )
        return data

    def load(self, skill: TrustedSkill) -> type[BaseSkill[Any, Any]]:
        with self._lock:
            data = self.verify(skill)
            digest = sha256_hex(data)
            key = (skill.name, str(skill.path))
            cached = self._cache.get(key)
            if cached is not None and cached.sha256 == digest:
                return cached.cls
            loaded = self._execute(skill, data, digest)
            if cached is not None:
                # The old content is no longer trusted: drop its module so nothing stale stays importable.
                _unregister(cached.module)
            self._cache[key] = loaded
            return loaded.cls

    def forget(self, skill_name: str) -> None:
        """Drop cached classes (and their modules) for a skill, e.g. after it is revoked."""
        with self._lock:
            for key in [k for k in self._cache if k[0] == skill_name]:
                _unregister(self._cache.pop(key).module)

    def _execute(self, skill: TrustedSkill, data: bytes, digest: str) -> _Loaded:
        # The same loader as the acceptance gate's: same module name, same file name, same namespace.
        try:
            module = exec_skill_module(skill.name, data, digest)
        except SourceEncodingError as exc:
            raise SkillLoadError(f"trusted skill {skill.name!r} is refused: {exc}") from None
        except (SyntaxError, ValueError) as exc:
            raise SkillLoadError(f"trusted skill {skill.name!r} does not compile: {exc}") from None
        except (Exception, SystemExit) as exc:
            raise SkillLoadError(
                f"trusted skill {skill.name!r} failed while loading: {type(exc).__name__}: {exc}"
            ) from exc
        try:
            cls = find_skill_class(module, skill)
        except BaseException:
            _unregister(module)
            raise
        self._executions += 1
        return _Loaded(sha256=digest, module=module, cls=cls)


default_loader = TrustLoader()


def load_trusted(skill: TrustedSkill) -> type[BaseSkill[Any, Any]]:
    """Load `skill` through the process-wide loader; raises TrustError before any code runs on a mismatch."""
    return default_loader.load(skill)
