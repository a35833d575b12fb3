"""The gate sandbox's seccomp filter, compiled to BPF by libseccomp (the maintained library bubblewrap expects).

The filter allows by default and refuses, with EPERM, the system calls a test or a skill never needs and an
escape usually does: new namespaces and joining others (`unshare`, `setns`, `clone` with a namespace flag),
mounts, `ptrace` and cross-process memory access, keyrings, `bpf`, perf events, kernel modules, kexec and
reboot, clock and time changes, swap, accounting, `io_uring`, handle-based opens and raw or packet sockets.
`clone3` answers ENOSYS: its flags live in memory a filter cannot read, and the C library then falls back to
`clone`, whose flags the filter does check. libseccomp also refuses every call made through a foreign ABI
(x32, i386 on x86_64).

bubblewrap loads the compiled program (`--seccomp FD`) after it has built the sandbox, just before it execs
the gate's command, so the command and all it starts run under it (`no_new_privs` is set too).
"""

import ctypes
import ctypes.util
import errno
import functools
import os
from dataclasses import dataclass

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO_BASE = 0x00050000
SCMP_CMP_MASKED_EQ = 7
SCMP_CMP_EQ = 4

CLONE_NAMESPACE_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
    | 0x00000080  # CLONE_NEWTIME
)

# Refused outright (EPERM). Names unknown to this kernel's libseccomp are skipped, and listed in the report.
DENIED_SYSCALLS: tuple[str, ...] = (
    # namespaces
    "unshare", "setns",
    # mounts and root changes
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr",
    # other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # keys, bpf, perf, userfaultfd
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    # kernel modules, kexec, reboot
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
    # clocks and time
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime",
    # system administration
    "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "sethostname", "setdomainname",
    "iopl", "ioperm", "vhangup", "lookup_dcookie", "nfsservctl", "uselib", "personality",
    # handle-based opens (escape a bind mount), io_uring (bypasses this filter), fanotify
    "name_to_handle_at", "open_by_handle_at", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "fanotify_init",
)
AF_PACKET = 17
SOCK_RAW = 3
SOCK_TYPE_MASK = 0xF
TIOCSTI = 0x5412


class SeccompUnavailable(RuntimeError):
    """libseccomp could not be found or could not compile the filter."""


@dataclass(frozen=True)
class CompiledFilter:
    bpf: bytes
    denied: tuple[str, ...]
    skipped: tuple[str, ...]

    def describe(self) -> str:
        text = (f"active: {len(self.denied)} system calls refused with EPERM (namespaces, setns, mounts, ptrace, "
                "keyctl, bpf, modules, clocks, io_uring…), clone with namespace flags and raw/packet sockets refused, "
                "clone3 ENOSYS, foreign ABIs refused")
        if self.skipped:
            text += f"; unknown to this libseccomp: {', '.join(self.skipped)}"
        return text


class _Arg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def _errno(code: int) -> int:
    return SCMP_ACT_ERRNO_BASE | (code & 0xFFFF)


@functools.cache
def _libseccomp() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as err:
        raise SeccompUnavailable(f"libseccomp is not installed ({err})") from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_Arg)]
    lib.seccomp_export_bpf.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _rule(lib: ctypes.CDLL, ctx: int, action: int, syscall: str, *args: tuple[int, int, int, int]) -> bool:
    nr = lib.seccomp_syscall_resolve_name(syscall.encode())
    if nr < 0:
        return False
    arr = (_Arg * max(1, len(args)))(*[_Arg(*a) for a in args])
    rc = lib.seccomp_rule_add_array(ctx, action, nr, len(args), arr)
    if rc < 0:
        raise SeccompUnavailable(f"libseccomp refused the rule for {syscall}: {os.strerror(-rc)}")
    return True


@functools.cache
def compiled_filter() -> CompiledFilter:
    """The filter as a BPF program (cached per process: it depends only on this machine's libseccomp)."""
    lib = _libseccomp()
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    try:
        eperm = _errno(errno.EPERM)
        denied: list[str] = []
        skipped: list[str] = []
        for name in DENIED_SYSCALLS:
            (denied if _rule(lib, ctx, eperm, name) else skipped).append(name)
        # clone with any namespace flag, one rule per flag (a masked compare with the whole mask would match only
        # all of them at once); clone3 cannot be inspected, so it looks absent and libc falls back to clone.
        for bit in range(32):
            flag = 1 << bit
            if CLONE_NAMESPACE_FLAGS & flag:
                _rule(lib, ctx, eperm, "clone", (0, SCMP_CMP_MASKED_EQ, flag, flag))
        _rule(lib, ctx, _errno(errno.ENOSYS), "clone3")
        # raw and packet sockets (no capability should allow them anyway: refused twice)
        _rule(lib, ctx, eperm, "socket", (0, SCMP_CMP_EQ, AF_PACKET, 0))
        _rule(lib, ctx, eperm, "socket", (1, SCMP_CMP_MASKED_EQ, SOCK_TYPE_MASK, SOCK_RAW))
        # pushing input into another terminal
        _rule(lib, ctx, eperm, "ioctl", (1, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, TIOCSTI))
        read_fd, write_fd = os.pipe()
        try:
            rc = lib.seccomp_export_bpf(ctx, write_fd)
            os.close(write_fd)
            write_fd = -1
            if rc < 0:
                raise SeccompUnavailable(f"libseccomp could not export the filter: {os.strerror(-rc)}")
            chunks = []
            while chunk := os.read(read_fd, 65536):
                chunks.append(chunk)
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
        return CompiledFilter(b"".join(chunks), tuple(denied), tuple(skipped))
    finally:
        lib.seccomp_release(ctx)


def filter_fd(compiled: CompiledFilter) -> int:
    """A fresh descriptor holding the program, for one bubblewrap start (it reads it to the end)."""
    fd = os.memfd_create("kavi-seccomp", os.MFD_CLOEXEC)
    os.write(fd, compiled.bpf)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
