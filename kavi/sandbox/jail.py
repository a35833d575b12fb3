"""The gate sandbox: bubblewrap (Debian's `bubblewrap`) around every process a gate starts.

Each gate command runs in its own world, built fresh for that one command:

- **user**: an unprivileged user (uid/gid 65534) in a new user namespace, with every capability dropped,
  `no_new_privs`, and no way to create further user namespaces (`--disable-userns`). When the forge runs as
  root, an outer bubblewrap builds the mounts and namespaces, `setpriv` drops to the host's uid 65534, and an
  inner bubblewrap enters the user namespace: the code never holds a root identity, not even a mapped one.
- **mount**: a tmpfs root holding only the system directories and the Python environment read-only, the
  forge's installed package read-only (its recorded answers masked), the job's work directory writable, a
  private `/tmp` and `/dev/shm`, a minimal `/dev` and the `/proc` of the new PID namespace. No `$HOME`, skills
  home, ledger, cassettes, project tree or host sockets.
- **pid**: a new PID namespace: the job sees and can signal only its own processes, and when its first process
  dies (or the forge kills it) the kernel kills every process left in it.
- **net**: a new network namespace with loopback only.
- **ipc, uts, cgroup**: new namespaces, so no shared memory segments, hostname or cgroup tree of the host.
- **seccomp**: the filter of `kavi.sandbox.seccomp`, loaded by the inner bubblewrap before the exec.

The pids cgroup, rlimits, scrubbed environment and wall timeout of `runner.py` wrap the whole thing.

`KAVI_SANDBOX_OFF` (comma-separated layer names) switches layers off for the containment tests that prove
each layer matters; every layer switched off is reported as omitted, with that reason, in the verification
report's isolation metadata. Nothing a proposal or a model controls reaches that variable.
"""

import contextlib
import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kavi.sandbox.seccomp import CompiledFilter, SeccompUnavailable, compiled_filter, filter_fd

SANDBOX_UID = 65534
SANDBOX_GID = 65534
LAYERS = ("user", "mount", "pid", "net", "seccomp", "cgroup")
OFF_VARIABLE = "KAVI_SANDBOX_OFF"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What a Python process reads from /etc: the dynamic linker's cache, time zone data, name service config.
ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/mime.types")
PASSWD = f"nobody:x:{SANDBOX_UID}:{SANDBOX_GID}:kavi gate:/nonexistent:/usr/sbin/nologin\n"
GROUP = f"nogroup:x:{SANDBOX_GID}:\n"
HOSTNAME = "kavi-gate"
# Memory-backed mounts are bounded, so filling /tmp or /dev/shm cannot exhaust the host's memory.
TMPFS_BYTES = 256 * 1024 * 1024
ROOT_TMPFS_BYTES = 1024 * 1024
OWN_MOUNTS = ("/tmp", "/dev", "/dev/shm", "/proc", "/etc")


def switched_off(layers: Iterable[str] | None = None) -> frozenset[str]:
    """The layers KAVI_SANDBOX_OFF switches off (a containment test's setting): `layers`, else the variable alone.
    The settings are imported here, not with this module: a caller that names the layers (a worker started before
    the command has read its settings, kavi.runtime.worker) builds a sandbox without them."""
    if layers is not None:
        return frozenset(layers)
    from kavi.settings import read_setting

    return frozenset(read_setting("sandbox_off"))


@dataclass
class JailCommand:
    """The prefix to put before a command, the descriptors it needs, and what each layer does."""

    prefix: list[str]
    pass_fds: list[int] = field(default_factory=list)
    isolation: dict[str, str] = field(default_factory=dict)
    run_as: int | None = None  # the host uid that must be able to write the work directories

    def close(self) -> None:
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pass_fds = []


@functools.cache
def _bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def _setpriv() -> str | None:
    return shutil.which("setpriv")


# The package whose `skills.base` and `runtime.handles` are the import paths forged skills and their tests name.
CONTRACT_PACKAGE = "kavi_assets"


@functools.cache
def package_root() -> Path:
    """The directory of the installed core package (an editable install: its source folder)."""
    import kavi

    return Path(kavi.__file__).resolve().parent


@functools.cache
def package_roots() -> list[Path]:
    """Every package folder a sandboxed process imports from: the core, and the skill contract's package (found,
    not imported: the core never loads the layer above it)."""
    spec = importlib.util.find_spec(CONTRACT_PACKAGE)
    roots = [package_root()]
    if spec is not None and spec.origin is not None:
        roots.append(Path(spec.origin).resolve().parent)
    return roots


@functools.cache
def _python_roots() -> list[Path]:
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    exe = Path(sys.executable)
    roots.add(exe.parent.resolve() if not exe.is_symlink() else exe.parent)
    roots.add(exe.resolve().parent.parent)
    # keep only the outermost of nested roots
    ordered = sorted(roots, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for p in ordered:
        if not any(p.is_relative_to(k) for k in kept):
            kept.append(p)
    return kept


@functools.cache
def hidden_package_dirs() -> list[Path]:
    """Folders of the package that gates never need and must not read: the recorded model's answers."""
    root = package_root()
    return [p for p in (root / "llm" / "cassettes", root / "examples") if p.is_dir()]


def _ancestors(paths: Iterable[Path]) -> list[str]:
    seen: dict[str, None] = {}
    for path in paths:
        for parent in reversed(path.parents):
            s = str(parent)
            if s != "/":
                seen[s] = None
    return list(seen)


def quick_problem() -> str | None:
    """What `probe` would find missing without starting anything (bubblewrap, setpriv as root, the seccomp filter);
    None does not prove the sandbox can be built here (`probe` does, by building one)."""
    if _bwrap() is None:
        return "bubblewrap (bwrap) is not installed; install Debian's `bubblewrap`"
    if os.geteuid() == 0 and _setpriv() is None:
        return "setpriv (util-linux) is not installed"
    try:
        compiled_filter()
    except SeccompUnavailable as err:
        return str(err)
    return None


@functools.cache
def probe() -> str | None:
    """None when bubblewrap works here with every layer; else why not (the runner then reports omissions)."""
    if _bwrap() is None:
        return "bubblewrap (bwrap) is not installed; install Debian's `bubblewrap`"
    if os.geteuid() == 0 and _setpriv() is None:
        return "setpriv (util-linux) is not installed"
    try:
        compiled_filter()
    except SeccompUnavailable as err:
        return str(err)
    with tempfile.TemporaryDirectory(prefix="kavi-jail-probe-") as tmp:
        jail = build(Path(tmp), rw=[], probing=True)
        hand_over([Path(tmp)], jail.run_as)
        try:
            res = subprocess.run([*jail.prefix, "/bin/true"], pass_fds=jail.pass_fds, capture_output=True,
                                 timeout=20, check=False, env={"PATH": "/usr/bin:/bin"})
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"bubblewrap could not start: {err}"
        finally:
            jail.close()
    if res.returncode != 0:
        return f"bubblewrap could not build the sandbox here: {res.stderr.decode(errors='replace').strip()[:300]}"
    return None


def _scratch_mounts(cwd: Path, size: int) -> list[str]:
    """`cwd` as a size-bounded tmpfs holding the host directory's files read-only: the job can write beside
    them, within `size`, and nothing it writes reaches the host's disk."""
    args = ["--perms", "1777", "--size", str(size), "--tmpfs", str(cwd)]
    for dirpath, dirnames, filenames in os.walk(cwd):
        base = Path(dirpath)
        for d in sorted(dirnames):
            args += ["--perms", "1777", "--dir", str(base / d)]
        for f in sorted(filenames):
            src = base / f
            if src.is_file() and not src.is_symlink():
                args += ["--ro-bind", str(src), str(src)]
    return args


def build(cwd: Path, rw: Sequence[Path], *, network: bool = False, probing: bool = False,
          scratch_bytes: int | None = None, off_layers: Iterable[str] | None = None) -> JailCommand:
    """The bubblewrap prefix for one command run in `cwd` (writable), with `rw` also writable. With
    `scratch_bytes`, `cwd` is instead a tmpfs of that size holding its files read-only (see _scratch_mounts).
    `off_layers`: the layers switched off (None: as KAVI_SANDBOX_OFF says)."""
    off = frozenset() if probing else switched_off(off_layers)
    bwrap = _bwrap()
    assert bwrap is not None
    outer: list[str] = [bwrap, "--die-with-parent", "--new-session"]
    isolation: dict[str, str] = {}
    pass_fds: list[int] = []

    def omitted(layer: str) -> None:
        isolation[layer] = f"omitted: switched off by {OFF_VARIABLE} (containment test)"

    # -- namespaces other than user
    if "pid" in off:
        omitted("pid")
    else:
        outer.append("--unshare-pid")
        isolation["pid"] = "active: new PID namespace (sees and signals only its own processes; all die with it)"
    if network:
        isolation["net"] = "omitted: this run was allowed the network"
    elif "net" in off:
        omitted("net")
    else:
        outer.append("--unshare-net")
        isolation["net"] = "active: new network namespace, loopback only"
    outer += ["--unshare-ipc", "--unshare-uts", "--hostname", HOSTNAME]
    if "cgroup" in off:
        omitted("cgroup")
    else:
        outer.append("--unshare-cgroup-try")
    # -- mounts
    python_roots = _python_roots()
    pkgs = package_roots()
    writable = [cwd, *rw]
    if "mount" in off:
        omitted("mount")
        outer += ["--dev-bind", "/", "/"]
        # Only what the sandbox user could not otherwise reach for running Python at all is re-mounted: a
        # folder it cannot enter on the way to the interpreter or the package is replaced by an empty one.
        for anc in _ancestors([*python_roots, *pkgs]):
            if not os.stat(anc).st_mode & 0o001:
                outer += ["--perms", "0755", "--tmpfs", anc]
        for anc in _ancestors([*python_roots, *pkgs]):
            outer += ["--perms", "0755", "--dir", anc]
        for r in [*python_roots, *pkgs]:
            outer += ["--ro-bind", str(r), str(r)]
    else:
        outer += ["--perms", "0755", "--size", str(ROOT_TMPFS_BYTES), "--tmpfs", "/"]
        for d in SYSTEM_DIRS:
            p = Path(d)
            if p.is_symlink():
                outer += ["--symlink", os.readlink(p), d]
            elif p.is_dir():
                outer += ["--ro-bind", d, d]
        outer += ["--perms", "0755", "--dir", "/etc"]
        for f in ETC_FILES:
            if Path(f).exists():
                outer += ["--ro-bind", f, f]
        for name, text in (("passwd", PASSWD), ("group", GROUP)):
            fd = os.memfd_create(f"kavi-{name}", 0)
            os.write(fd, text.encode())
            os.lseek(fd, 0, os.SEEK_SET)
            pass_fds.append(fd)
            outer += ["--perms", "0444", "--ro-bind-data", str(fd), f"/etc/{name}"]
        outer += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp",
                  "--perms", "1777", "--size", str(TMPFS_BYTES), "--tmpfs", "/dev/shm"]
        targets = [*python_roots, *pkgs, *writable]
        for anc in _ancestors(targets):
            if not anc.startswith(tuple(f"{d}/" for d in SYSTEM_DIRS)) and anc not in (*SYSTEM_DIRS, *OWN_MOUNTS):
                outer += ["--perms", "0755", "--dir", anc]
        for root in python_roots:
            if not str(root).startswith(tuple(f"{d}/" for d in SYSTEM_DIRS)):
                outer += ["--ro-bind", str(root), str(root)]
        for pkg in pkgs:
            if not any(pkg.is_relative_to(r) for r in python_roots):
                outer += ["--ro-bind", str(pkg), str(pkg)]
        for hidden in hidden_package_dirs():
            outer += ["--perms", "0555", "--tmpfs", str(hidden), "--remount-ro", str(hidden)]
        for w in writable:
            if w == cwd and scratch_bytes is not None:
                outer += _scratch_mounts(cwd, scratch_bytes)
            else:
                outer += ["--bind", str(w), str(w)]
        where = (f"the job's directory a tmpfs of {scratch_bytes // (1024 * 1024)} MB holding its files read-only "
                 "(nothing the job writes reaches the host's disk)" if scratch_bytes is not None
                 else "only the job's directory writable")
        isolation["mount"] = ("active: tmpfs root with the system and the Python environment read-only, the forge's "
                              f"packages read-only (recorded answers masked), {where}, "
                              "private /tmp and /dev/shm, minimal /dev, /proc of its own PID namespace; no home, "
                              "skills home, ledger or host sockets")
    # -- user, capabilities, seccomp
    seccomp: CompiledFilter | None = None
    if "seccomp" in off:
        omitted("seccomp")
    else:
        seccomp = compiled_filter()
    as_root = os.geteuid() == 0
    run_as: int | None = None
    if "user" in off:
        omitted("user")
        outer += ["--chdir", str(cwd), "--cap-drop", "ALL"]
        if seccomp is not None:
            fd = filter_fd(seccomp)
            pass_fds.append(fd)
            outer += ["--seccomp", str(fd)]
        command = outer
    else:
        inner_bwrap = [bwrap, "--unshare-user", "--disable-userns", "--uid", str(SANDBOX_UID),
                       "--gid", str(SANDBOX_GID), "--die-with-parent", "--dev-bind", "/", "/", "--chdir", str(cwd)]
        if seccomp is not None:
            fd = filter_fd(seccomp)
            pass_fds.append(fd)
            inner_bwrap += ["--seccomp", str(fd)]
        if as_root:
            setpriv = _setpriv()
            assert setpriv is not None
            run_as = SANDBOX_UID
            command = [*outer, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
                       setpriv, f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_GID}", "--clear-groups",
                       "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", *inner_bwrap]
            isolation["user"] = (f"active: host uid/gid {SANDBOX_UID} (dropped by setpriv inside the outer sandbox) "
                                 f"in a new user namespace, no capabilities, no_new_privs, no nested user namespaces")
        else:
            command = [*outer, *inner_bwrap]
            isolation["user"] = (f"active: the invoking unprivileged user, uid {SANDBOX_UID} in a new user namespace, "
                                 "no capabilities, no_new_privs, no nested user namespaces")
    if seccomp is not None:
        isolation["seccomp"] = seccomp.describe()
    command.append("--")
    return JailCommand(command, pass_fds, isolation, run_as)


def job_owner(off_layers: Iterable[str] | None = None) -> int | None:
    """The uid `build` runs a job as where it is not the forge's own (None): the folders it may use go to it."""
    return SANDBOX_UID if os.geteuid() == 0 and "user" not in switched_off(off_layers) else None


def hand_over(paths: Iterable[Path], uid: int | None) -> None:
    """Give the sandbox user the directories it may write (the forge keeps reading and removing them)."""
    if uid is None:
        return
    for top in paths:
        if not top.exists():
            continue
        os.chown(top, uid, uid, follow_symlinks=False)
        for dirpath, dirnames, filenames in os.walk(top):
            for n in (*dirnames, *filenames):
                os.chown(os.path.join(dirpath, n), uid, uid, follow_symlinks=False)
