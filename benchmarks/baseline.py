"""Forge with an earlier commit's code in the same benchmark run: `--baseline REV` of forge_throughput.py and
forge_parallel.py.

The commit's packages (kavi, kavi_assets, resources, sensors, from `git archive`) are bound over this checkout's in
a private mount namespace (`unshare --mount`, root only). The editable install imports the packages from this
checkout's folders and the gate sandbox binds the folders it imports from, so in that namespace both see the
commit's code, with the same interpreter, tools, proposals and recorded answers. Nothing in the checkout is touched,
and a run outside the namespace, at the same time, still sees the working tree.

A marker file in the bound `kavi` folder tells a run which code it forged with (`code_in_use`); each benchmark
checks it, so a figure is never printed under the wrong commit.
"""

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("kavi", "kavi_assets", "resources", "sensors")
MARKER = ".kavi-benchmark-baseline"
WORKING_TREE = "working tree"
_BIND = 'set -e; while [ "$1" != "--" ]; do mount --bind "$1" "$2"; shift 2; done; shift; exec "$@"'


def code_in_use() -> str:
    """What this process forges with: the baseline's short commit when its packages are bound here, else
    WORKING_TREE."""
    marker = REPO / "kavi" / MARKER
    return marker.read_text(encoding="utf-8").strip() if marker.is_file() else WORKING_TREE


def _git(*argv: str) -> str:
    proc = subprocess.run(["git", "-C", str(REPO), *argv], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(argv)}: {proc.stderr.strip()[:300]}")
    return proc.stdout.strip()


def require_namespaces() -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        raise SystemExit("--baseline binds the baseline's packages over this checkout's in a private mount namespace, "
                         "which needs root and util-linux's unshare; without them, run each commit's checkout in turn")


def head_label() -> str:
    """The working tree as the tables name it: its commit, and `+changes` when the packages differ from it."""
    changed = _git("status", "--porcelain", "--", *PACKAGES)
    return f"{WORKING_TREE} {_git('rev-parse', '--short', 'HEAD')}{'+changes' if changed else ''}"


def extract(rev: str) -> tuple[str, Path]:
    """(short commit, a fresh folder holding that commit's packages and the marker naming it)."""
    commit = _git("rev-parse", "--short", f"{rev}^{{commit}}")
    present = set(_git("ls-tree", "--name-only", commit).splitlines())
    packages = [p for p in PACKAGES if p in present]
    root = Path(tempfile.mkdtemp(prefix="kavi-baseline-"))
    tar = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit, *packages],
                         capture_output=True, check=False)
    if tar.returncode != 0:
        raise SystemExit(f"git archive {commit}: {tar.stderr.decode(errors='replace').strip()[:300]}")
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as archive:
        archive.extractall(root, filter="data")
    for p in PACKAGES:
        (root / p).mkdir(exist_ok=True)  # a package the commit did not have is hidden, not mixed in
    (root / "kavi" / MARKER).write_text(commit, encoding="utf-8")
    return commit, root


def bound(tree: Path, argv: Sequence[str]) -> list[str]:
    """`argv` run in a private mount namespace where `tree`'s packages stand in for this checkout's."""
    binds = [x for p in PACKAGES for x in (str(tree / p), str(REPO / p))]
    return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", _BIND, "kavi-baseline", *binds,
            "--", *argv]
