"""The vault handle: a directory of notes a skill may read (and write, when granted), confined to its root; it
enforces at run time the limits the static policy gate checks in the source."""

import contextlib
import os
import re
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

DEFAULT_MAX_WRITE_BYTES = 1_000_000
DEFAULT_MAX_READ_BYTES = 10_000_000
_TMP_PREFIX = ".kavi-tmp-"
_LOCK_NAME = f"{_TMP_PREFIX}write.lock"  # hidden from listings like the temporary files
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class VaultPathError(ValueError):
    """A vault path that is absolute, climbs out, holds a NUL, or goes through a symbolic link."""


class VaultWriteDenied(PermissionError):
    """A write to a vault the skill may only read."""


class VaultLimitError(ValueError):
    """A read or write larger than the vault allows."""


def _split_vault_path(path: str) -> tuple[str, ...]:
    """Check a skill-supplied relative path and return its components (no '', '.', or '..')."""
    if not isinstance(path, str):
        raise VaultPathError(f"vault paths are strings, got {type(path).__name__}")
    if "\x00" in path:
        raise VaultPathError(f"vault path {path!r} contains a NUL character")
    if "\\" in path:
        # Refused rather than treated as a name so Windows-style traversal ('..\\x') can never mean anything.
        raise VaultPathError(f"vault path {path!r} contains a backslash; use '/' between components")
    if path.startswith("/") or path.startswith("~"):
        raise VaultPathError(f"vault path {path!r} is absolute; vault paths are relative to the vault root")
    raw = path.split("/")
    if ".." in raw:
        raise VaultPathError(f"vault path {path!r} contains '..'; paths may not climb out of the vault")
    parts = tuple(p for p in raw if p not in ("", "."))
    if not parts:
        raise VaultPathError(f"vault path {path!r} names no file")
    return parts


def _glob_segment_regex(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = segment.find("]", i + 2 if segment[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = segment[i + 1 : end].replace("[", "\\[")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body + "]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a relative glob ('*', '?', '[...]', '**' for any depth) to a regex over posix paths."""
    if "\x00" in pattern or "\\" in pattern:
        raise VaultPathError(f"pattern {pattern!r} contains a NUL or a backslash")
    if pattern.startswith("/") or pattern.startswith("~"):
        raise VaultPathError(f"pattern {pattern!r} is absolute; patterns are relative to the vault root")
    segments = [s for s in pattern.split("/") if s not in ("", ".")]
    if ".." in segments:
        raise VaultPathError(f"pattern {pattern!r} contains '..'")
    if not segments:
        segments = ["**", "*"]
    parts: list[str] = []
    for index, seg in enumerate(segments):
        last = index == len(segments) - 1
        if seg == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
        else:
            parts.append(_glob_segment_regex(seg) + ("" if last else "/"))
    return re.compile("".join(parts))


class Vault:
    """A directory of notes a skill may read (and write, when granted), confined to its root.

    Every access walks the path one component at a time from an open descriptor of the root, refusing
    symbolic links with O_NOFOLLOW, so a link swapped in between a check and the open cannot lead out.
    """

    def __init__(
        self,
        root: Path,
        *,
        writable: bool,
        max_write_bytes: int = DEFAULT_MAX_WRITE_BYTES,
        max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
    ) -> None:
        self._root = Path(root).expanduser().resolve()
        self._writable = writable
        self._max_write = max_write_bytes
        self._max_read = max_read_bytes

    @property
    def root(self) -> Path:
        return self._root

    @property
    def writable(self) -> bool:
        return self._writable

    def __repr__(self) -> str:
        return f"Vault({str(self._root)!r}, writable={self._writable})"

    # -- internal walking -------------------------------------------------------------------------

    def _open_root(self, *, create: bool) -> int:
        if create:
            self._root.mkdir(parents=True, exist_ok=True)
        try:
            return os.open(self._root, _DIR_FLAGS)
        except FileNotFoundError:
            raise FileNotFoundError(f"the vault root {self._root} does not exist") from None

    def _open_parent(self, parts: tuple[str, ...], *, create: bool) -> int:
        """Open the directory holding the last component; the caller closes the returned descriptor."""
        fd = self._open_root(create=create)
        try:
            for depth, name in enumerate(parts[:-1]):
                shown = "/".join(parts[: depth + 1])
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    if not create:
                        raise FileNotFoundError(f"vault has no directory {shown!r}") from None
                    os.mkdir(name, 0o755, dir_fd=fd)
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    raise VaultPathError(f"vault path component {shown!r} is a symbolic link; links are refused")
                if not stat.S_ISDIR(st.st_mode):
                    raise NotADirectoryError(f"vault path component {shown!r} is not a directory")
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise VaultPathError(f"vault path component {shown!r} could not be opened safely: {exc}") from None
                os.close(fd)
                fd = child
            return fd
        except BaseException:
            os.close(fd)
            raise

    @staticmethod
    def _lstat_last(fd: int, name: str, shown: str) -> os.stat_result | None:
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            raise VaultPathError(f"vault path {shown!r} is a symbolic link; links are refused")
        return st

    # -- the VaultHandle protocol -----------------------------------------------------------------

    def read_text(self, path: str) -> str:
        parts = _split_vault_path(path)
        shown = "/".join(parts)
        fd = self._open_parent(parts, create=False)
        try:
            st = self._lstat_last(fd, parts[-1], shown)
            if st is None:
                raise FileNotFoundError(f"vault file not found: {shown!r}")
            if not stat.S_ISREG(st.st_mode):
                raise IsADirectoryError(f"vault path {shown!r} is not a regular file")
            if st.st_size > self._max_read:
                raise VaultLimitError(f"vault file {shown!r} is {st.st_size} bytes; the read limit is {self._max_read}")
            try:
                ffd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
            except OSError as exc:
                raise VaultPathError(f"vault file {shown!r} could not be opened safely: {exc}") from None
        finally:
            os.close(fd)
        try:
            if not stat.S_ISREG(os.fstat(ffd).st_mode):
                raise IsADirectoryError(f"vault path {shown!r} is not a regular file")
            chunks: list[bytes] = []
            total = 0
            while chunk := os.read(ffd, 1 << 16):
                total += len(chunk)
                if total > self._max_read:
                    raise VaultLimitError(f"vault file {shown!r} exceeds the read limit of {self._max_read} bytes")
                chunks.append(chunk)
        finally:
            os.close(ffd)
        try:
            return b"".join(chunks).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"vault file {shown!r} is not UTF-8 text: {exc}") from None

    def exists(self, path: str) -> bool:
        parts = _split_vault_path(path)
        try:
            fd = self._open_parent(parts, create=False)
        except (FileNotFoundError, NotADirectoryError):
            return False
        try:
            return self._lstat_last(fd, parts[-1], "/".join(parts)) is not None
        finally:
            os.close(fd)

    def list_files(self, pattern: str = "**/*") -> list[str]:
        regex = glob_to_regex(pattern)
        try:
            fd = self._open_root(create=False)
        except (FileNotFoundError, NotADirectoryError):
            return []
        try:
            found = [rel for rel in self._walk_files(fd, "") if regex.fullmatch(rel)]
        finally:
            os.close(fd)
        return sorted(found)

    def _walk_files(self, dir_fd: int, prefix: str) -> Iterator[str]:
        with os.scandir(dir_fd) as it:
            entries = list(it)
        for entry in entries:
            # Links are never followed or listed, whether they point in or out of the vault.
            if entry.is_symlink() or entry.name.startswith(_TMP_PREFIX):
                continue
            rel = f"{prefix}{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                try:
                    child = os.open(entry.name, _DIR_FLAGS, dir_fd=dir_fd)
                except OSError:
                    continue
                try:
                    yield from self._walk_files(child, rel + "/")
                finally:
                    os.close(child)
            elif entry.is_file(follow_symlinks=False):
                yield rel

    def write_text(self, path: str, content: str, *, overwrite: bool = True) -> str:
        """Write `content` at `path` (atomically: a reader sees the old file or the new one). With `overwrite` false
        the write is an exclusive create: FileExistsError when anything is already there, decided atomically.
        Writes into one vault are serialized (a lock file in the vault root), across processes too."""
        if not self._writable:
            raise VaultWriteDenied(
                f"the vault is read-only for this skill; cannot write {path!r} (only FILE_WRITE skills may write)"
            )
        if not isinstance(content, str):
            raise TypeError(f"vault content must be str, got {type(content).__name__}")
        parts = _split_vault_path(path)
        shown = "/".join(parts)
        data = content.encode("utf-8")
        if len(data) > self._max_write:
            raise VaultLimitError(f"refusing to write {len(data)} bytes to {shown!r}; the limit is {self._max_write}")
        fd = self._open_parent(parts, create=True)
        try:
            with self._write_lock():
                st = self._lstat_last(fd, parts[-1], shown)
                if st is not None and not stat.S_ISREG(st.st_mode):
                    raise IsADirectoryError(f"vault path {shown!r} exists and is not a regular file")
                if st is not None and not overwrite:
                    raise FileExistsError(f"vault file {shown!r} already exists (written without overwrite)")
                self._write_new(fd, parts[-1], data, overwrite=overwrite, shown=shown)
        finally:
            os.close(fd)
        return shown

    @contextlib.contextmanager
    def _write_lock(self) -> Iterator[None]:
        import fcntl

        root = self._open_root(create=True)
        try:
            lock = os.open(_LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=root)
        finally:
            os.close(root)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            os.close(lock)

    @staticmethod
    def _write_new(fd: int, name: str, data: bytes, *, overwrite: bool, shown: str) -> None:
        tmp = f"{_TMP_PREFIX}{uuid.uuid4().hex}"
        tfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(tfd, view) :]
            os.fsync(tfd)
            os.close(tfd)
            tfd = -1
            # Same directory descriptor on both sides: the new name cannot land anywhere but here.
            if overwrite:
                os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            else:
                try:
                    os.link(tmp, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
                except FileExistsError:
                    raise FileExistsError(f"vault file {shown!r} already exists (written without overwrite)") from None
                os.unlink(tmp, dir_fd=fd)
        except BaseException:
            if tfd >= 0:
                os.close(tfd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=fd)
            raise
