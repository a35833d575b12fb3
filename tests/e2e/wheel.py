"""The main job as a newcomer runs it: a wheel built from this project, installed with its dependencies in a fresh
virtual environment, and `kavi demo` started from a folder outside any checkout."""

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.factories import REPO, DemoRun

# What the wheel is built from: the project without environments, caches or build leftovers (a stale *.egg-info
# would carry an old file list into the wheel), and without what the wheel does not hold.
_TOP_LEVEL_LEFT_OUT = {".git", ".venv", "venv", "build", "dist", ".mypy_cache", ".ruff_cache", ".pytest_cache",
                       "tests", "benchmarks", "docs"}


def _not_built_from(folder: str, names: list[str]) -> set[str]:
    top = Path(folder) == REPO  # kavi/build is a package: only the project's own build/ is left out
    return {n for n in names if (top and n in _TOP_LEVEL_LEFT_OUT) or n == "__pycache__" or n.endswith(".egg-info")}


def checked(args: list[str], timeout: float, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@dataclass(frozen=True)
class WheelDemo:
    """The shared demo and where it ran from: the fresh environment and the unrelated folder it was started in."""

    run: DemoRun
    venv: Path
    elsewhere: Path


def demo_from_a_wheel(root: Path) -> WheelDemo:
    """Build the wheel, install it in a fresh environment under `root` and run its `kavi demo` from an empty folder,
    with no KAVI_, DAGSTER_ or PYTHON variables of this process (the demo's result is returned, not asserted)."""
    src, wheels, venv = root / "src", root / "wheels", root / "venv"
    shutil.copytree(REPO, src, ignore=_not_built_from)
    checked([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(src)], 600)
    (wheel,) = wheels.glob("kavi_forge-*.whl")
    shutil.rmtree(src)  # nothing of the project is left but the wheel
    # The fresh environment is installed into by this environment's pip (`pip --python`), as current as the one the
    # README's set-up upgrades to: the pip that `venv` bundles with this Python is years older and takes twice the
    # time to read the package index.
    checked([sys.executable, "-m", "venv", "--without-pip", str(venv)], 300)
    python = venv / "bin" / "python"
    # Its dependencies as pip finds them.
    checked([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(wheel)], 1200)

    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    home, dagster_home = root / "kavi-home", root / "dagster-home"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KAVI_", "DAGSTER_", "PYTHON", "VIRTUAL_ENV")) and k != "COLUMNS"}
    env.update(KAVI_HOME=str(home), DAGSTER_HOME=str(dagster_home), KAVI_RECORDED_SPEED="0",
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    demo = subprocess.run([str(venv / "bin" / "kavi"), "demo"], cwd=elsewhere, env=env, capture_output=True,
                          text=True, timeout=1500, check=False)
    return WheelDemo(DemoRun(home, dagster_home, env, demo.stdout + demo.stderr, demo.returncode, str(python)),
                     venv, elsewhere)
