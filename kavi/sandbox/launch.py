"""A gate job's first code inside its sandbox: `python -m kavi.sandbox.launch PRELOAD MODULE ARGS...` imports the
modules named in PRELOAD (comma-separated: the tool and what the job imports from the installed packages), waits
until the forge writes the job to stdin, and then runs MODULE as `python -m MODULE ARGS...` would, stdin unread.

Started with its job, this costs nothing. Started ahead of it (kavi.sandbox.held), the imports happen while the
build still waits for its model. When stdin is closed with nothing written (a held job nobody took), it exits
with NOT_RELEASED and runs nothing.
"""

import contextlib
import fcntl
import importlib
import runpy
import select
import struct
import sys
import termios

NOT_RELEASED = 3
USAGE = 2


def _job_waiting() -> bool:
    """Block until stdin is readable; True when bytes wait there, False at its end with nothing written."""
    while True:
        try:
            readable, _, _ = select.select([0], [], [])
        except InterruptedError:
            continue
        if readable:
            break
    try:
        raw = fcntl.ioctl(0, termios.FIONREAD, struct.pack("i", 0))
    except OSError:
        return True  # not a pipe: let the tool read what is there
    return bool(struct.unpack("i", raw)[0] > 0)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m kavi.sandbox.launch PRELOAD MODULE [ARGS...]", file=sys.stderr)
        return USAGE
    preload, module, args = argv[0], argv[1], argv[2:]
    for name in filter(None, preload.split(",")):
        with contextlib.suppress(ImportError):  # the tool's own import reports what is missing
            importlib.import_module(name)
    if not _job_waiting():
        return NOT_RELEASED
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
