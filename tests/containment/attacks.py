"""Attacks a gate job tries from inside the sandbox. Each returns "ok:..." when the attack worked (an escape)
and "blocked:..." when it did not. The module is read as text and run inside the sandbox with its parameters:
it must import only the standard library."""

import ctypes
import ctypes.util
import json
import os
import signal
import socket
import sys
import time

P: dict = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _err() -> str:
    return os.strerror(ctypes.get_errno())


def attempt(fn):  # type: ignore[no-untyped-def]
    try:
        return fn()
    except Exception as err:  # every failure is a block
        return f"blocked:{type(err).__name__}: {err}"


def write(path: str) -> str:
    with open(path, "w") as fh:
        fh.write("owned by a gate job\n")
    return f"ok:wrote {path}"


def read(path: str) -> str:
    with open(path, "rb") as fh:
        data = fh.read(4096)
    # print what was read: the forge must not let it leave through messages either
    print(data.decode(errors="replace"))
    return f"ok:read {len(data)} bytes of {path}"


def listdir(path: str) -> str:
    names = os.listdir(path)
    return f"ok:{path} lists {names[:5]}" if names else f"blocked:{path} is empty"


def connect_tcp(port: int) -> str:
    s = socket.socket()
    s.settimeout(2)
    s.connect(("127.0.0.1", port))
    s.sendall(b"escaped\n")
    return "ok:connected to the host's loopback listener"


def send_udp(port: int) -> str:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"escaped", ("127.0.0.1", port))
    time.sleep(0.2)
    return "blocked:sent (delivery is checked by the host side)"


def connect_unix(path: str) -> str:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(path)
    return f"ok:connected to host unix socket {path!r}"


def dns() -> str:
    socket.setdefaulttimeout(2)
    addr = socket.getaddrinfo("example.com", 80)
    return f"ok:resolved {addr[:1]}"


def kill(pid: int) -> str:
    os.kill(pid, signal.SIGKILL)
    return f"ok:killed {pid}"


def killpg(pgid: int) -> str:
    os.killpg(pgid, signal.SIGKILL)
    return f"ok:killed process group {pgid}"


def setns_forge(pid: int) -> str:
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    if libc.setns(fd, 0) != 0:
        return f"blocked:setns: {_err()}"
    return "ok:joined the forge's network namespace"


def unshare_user() -> str:
    if libc.unshare(0x10000000) != 0:
        return f"blocked:unshare: {_err()}"
    return "ok:created a user namespace"


def ptrace_traceme() -> str:
    pid = os.fork()
    if pid == 0:  # in a child, which then exits: a traced process would stop at its next exec
        os._exit(0 if libc.ptrace(0, 0, 0, 0) == 0 else 1)
    _, status = os.waitpid(pid, 0)
    return "ok:ptrace allowed" if os.waitstatus_to_exitcode(status) == 0 else "blocked:ptrace refused"


def keyctl() -> str:
    # KEYCTL_GET_KEYRING_ID (0) of the session keyring (-3), creating it
    r = libc.syscall(250, 0, -3, 1)
    if r < 0:
        return f"blocked:keyctl: {_err()}"
    return "ok:keyctl allowed"


def mount_tmpfs() -> str:
    os.makedirs("mnt", exist_ok=True)
    if libc.mount(b"none", b"mnt", b"tmpfs", 0, None) != 0:
        return f"blocked:mount: {_err()}"
    return "ok:mounted"


def privileges() -> str:
    with open("/proc/self/status") as fh:
        status = dict(line.split(":\t", 1) for line in fh.read().splitlines() if ":\t" in line)
    uid = int(status["Uid"].split()[0])
    caps = int(status["CapEff"].strip(), 16)
    nnp = status.get("NoNewPrivs", "0").strip()
    if uid == 0 or caps or nnp != "1":
        return f"ok:uid {uid}, CapEff {caps:x}, NoNewPrivs {nnp}"
    return f"blocked:uid {uid}, no capabilities, no_new_privs"


def own_cgroup() -> str:
    with open("/proc/self/cgroup") as fh:
        lines = fh.read().splitlines()
    foreign = [ln for ln in lines if not ln.endswith(":/")]
    return f"ok:sees host cgroup paths {foreign[:2]}" if foreign else "blocked:own cgroup namespace"


def leave_cgroup() -> str:
    for root in ("/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        path = os.path.join(root, "cgroup.procs")
        if os.path.exists(path):
            with open(path, "w") as fh:
                fh.write(str(os.getpid()))
            return f"ok:moved into {path}"
    return "blocked:no cgroup filesystem"


def daemon(token: str) -> str:
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", f"import time; time.sleep(120)  # {token}"])
        os._exit(0)
    os.waitpid(pid, 0)
    return "blocked:started (survival is checked by the host side)"


def run(attacks: dict[str, str]) -> dict[str, str]:
    table = {
        "write": write, "read": read, "listdir": listdir, "tcp": connect_tcp, "udp": send_udp,
        "unix": connect_unix, "kill": kill, "killpg": killpg, "setns": setns_forge,
    }
    out: dict[str, str] = {}
    for label, spec in attacks.items():
        kind, _, arg = spec.partition(" ")
        if kind in table:
            fn = table[kind]
            out[label] = attempt(lambda fn=fn, arg=arg: fn(int(arg) if arg.isdigit() else arg))
        else:
            fn0 = {"dns": dns, "unshare_user": unshare_user, "ptrace": ptrace_traceme, "keyctl": keyctl,
                   "mount": mount_tmpfs, "privileges": privileges, "own_cgroup": own_cgroup,
                   "leave_cgroup": leave_cgroup}.get(kind)
            if kind == "daemon":
                out[label] = attempt(lambda arg=arg: daemon(arg))
            elif fn0 is not None:
                out[label] = attempt(fn0)
            else:
                out[label] = f"blocked:unknown attack {kind}"
    return out


if __name__ == "__main__":
    print("KAVI-ATTACKS:" + json.dumps(run(P["attacks"])))
