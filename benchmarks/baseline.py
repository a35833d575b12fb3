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

import argparse
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("kavi", "kavi_assets", "resources", "sensors")
MARKER = ".kavi-benchmark-baseline"
WORKING_TREE = "working tree"
_BIND = 'set -e; while [ "$1" != "--" ]; do mount --bind "$1" "$2"; shift 2; done; shift; exec "$@"'


@dataclass(frozen=True)
class Run:
    """One child run of `alternate`: which side, which round, and the figures it wrote."""

    label: str
    baseline: bool
    round: int
    doc: dict[str, Any]


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


def add_arguments(parser: argparse.ArgumentParser, rounds: int, what: str) -> None:
    """--baseline REV, --rounds N and the children's hidden --emit PATH."""
    parser.add_argument("--baseline", metavar="REV", default=None,
                        help=f"also {what} with REV's packages (as root), alternating with the working tree, and "
                             "print both side by side")
    parser.add_argument("--rounds", type=int, default=rounds, help=f"with --baseline: runs of each side (default "
                                                                   f"{rounds})")
    parser.add_argument("--emit", type=Path, default=None, help=argparse.SUPPRESS)  # a --baseline run's child


def alternate(rev: str, rounds: int, child: Callable[[Path], list[str]]) -> tuple[str, str, list[Run]]:
    """Run `child(out)` (a command line that writes its figures as JSON to `out`, with `code_in_use()` as "code")
    with `rev`'s packages and with the working tree, alternating, `rounds` times each. Returns (rev's short commit,
    the working tree's label, the runs in order)."""
    require_namespaces()
    commit, tree = extract(rev)
    head = head_label()
    outs = Path(tempfile.mkdtemp(prefix="kavi-baseline-runs-"))
    runs: list[Run] = []
    try:
        for k in range(rounds):
            for is_base in ((True, False) if k % 2 == 0 else (False, True)):
                label = commit if is_base else head
                print(f"round {k + 1}: {label} ...", flush=True)
                out = outs / f"{k}-{'base' if is_base else 'head'}.json"
                argv = child(out)
                proc = subprocess.run(bound(tree, argv) if is_base else argv, check=False, stdout=subprocess.DEVNULL)
                if proc.returncode != 0 or not out.is_file():
                    raise SystemExit(f"the {label} run failed (exit {proc.returncode})")
                doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
                expected = commit if is_base else WORKING_TREE
                if doc.get("code") != expected:
                    raise SystemExit(f"the run forged with {doc.get('code')}, not {expected}: the figures are not "
                                     "its own")
                runs.append(Run(label, is_base, k + 1, doc))
    finally:
        shutil.rmtree(tree, ignore_errors=True)
        shutil.rmtree(outs, ignore_errors=True)
    return commit, head, runs
