"""The main job from a wheel: built, installed in a fresh environment, and run from a folder outside any checkout."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import REPO

pytestmark = pytest.mark.slow

ROOT = REPO
# What the wheel is built from: the project without environments, caches or build leftovers (a stale *.egg-info
# would carry an old file list into the wheel), and without what the wheel does not hold.
_TOP_LEVEL_LEFT_OUT = {".git", ".venv", "venv", "build", "dist", ".mypy_cache", ".ruff_cache", ".pytest_cache",
                       "tests", "benchmarks", "docs"}


def _not_built_from(folder: str, names: list[str]) -> set[str]:
    top = Path(folder) == ROOT  # kavi/build is a package: only the project's own build/ is left out
    return {n for n in names if (top and n in _TOP_LEVEL_LEFT_OUT) or n == "__pycache__" or n.endswith(".egg-info")}
_ROW = re.compile(r"^ ([a-z][a-z0-9_]*) +[│┃]")


def _run(args: list[str], timeout: float, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _summary(text: str) -> tuple[str, dict[str, tuple[str, ...]]]:
    """The Forge summary table in TEXT: its header line, and skill -> (class, status, version) for each row. The
    attempts column varies with the router's choices (and with it the trusted source's hash), so it is left out."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Forge summary")
    header = lines[start + 1].rstrip()
    rows: dict[str, tuple[str, ...]] = {}
    for line in lines[start + 3:]:
        m = _ROW.match(line)
        if m is None:
            if line.strip() and not line.startswith(" " * 10):
                break
            continue
        cells = [c.strip() for c in re.split(r"[│┃]", line)]
        rows[m.group(1)] = (cells[1], cells[2], cells[3])
    return header, rows


def test_demo_from_an_installed_wheel(tmp_path: Path) -> None:
    src, wheels, venv = tmp_path / "src", tmp_path / "wheels", tmp_path / "venv"
    shutil.copytree(ROOT, src, ignore=_not_built_from)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(src)], 600)
    (wheel,) = wheels.glob("kavi_forge-*.whl")
    shutil.rmtree(src)  # nothing of the project is left but the wheel
    _run([sys.executable, "-m", "venv", str(venv)], 300)
    python, kavi = venv / "bin" / "python", venv / "bin" / "kavi"
    _run([str(python), "-m", "pip", "install", "-q", str(wheel)], 1200)  # its dependencies as pip finds them

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KAVI_", "DAGSTER_", "PYTHON", "VIRTUAL_ENV")) and k != "COLUMNS"}
    env.update(KAVI_HOME=str(tmp_path / "kavi-home"), DAGSTER_HOME=str(tmp_path / "dagster-home"),
               KAVI_RECORDED_SPEED="0", PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    where = _run([str(python), "-c", "import kavi, kavi_assets; print(kavi.__file__); print(kavi_assets.__file__)"],
                 60, cwd=elsewhere, env=env).stdout.split()
    assert all(Path(p).is_relative_to(venv) for p in where), where  # the wheel's package, not this checkout's

    demo = subprocess.run([str(kavi), "demo"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=1500,
                          check=False)
    out = demo.stdout + demo.stderr
    assert demo.returncode == 0, out[-4000:]
    assert "RECORDED MODEL" in demo.stdout
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown_header, shown = _summary(readme)
    header, rows = _summary(demo.stdout)
    assert header == shown_header, (header, shown_header)
    assert rows == shown, (rows, shown)  # every example forged, each to the README's status and version
    assert not list(elsewhere.iterdir())  # run from an unrelated folder, it wrote nothing there
