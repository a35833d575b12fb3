"""The main job from a wheel: built, installed in a fresh environment, and run from a folder outside any checkout."""

import re
from pathlib import Path

import pytest

from tests.e2e.wheel import WheelDemo, checked
from tests.factories import REPO

pytestmark = pytest.mark.slow

_ROW = re.compile(r"^ ([a-z][a-z0-9_]*) +[│┃]")


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


def test_demo_from_an_installed_wheel(wheel_demo: WheelDemo) -> None:
    """The shared demo ran from the installed wheel (conftest.py): its packages are the fresh environment's, every
    example reached the README's status and version, and the folder it ran in is left empty."""
    demo, venv = wheel_demo.run, wheel_demo.venv
    where = checked([demo.python, "-c", "import kavi, kavi_assets; print(kavi.__file__); print(kavi_assets.__file__)"],
                    60, cwd=wheel_demo.elsewhere, env=demo.env).stdout.split()
    assert all(Path(p).is_relative_to(venv) for p in where), where  # the wheel's package, not this checkout's
    assert demo.returncode == 0, demo.stdout[-4000:]
    assert "RECORDED MODEL" in demo.stdout
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shown_header, shown = _summary(readme)
    header, rows = _summary(demo.stdout)
    assert header == shown_header, (header, shown_header)
    assert rows == shown, (rows, shown)  # every example forged, each to the README's status and version
    assert not list(wheel_demo.elsewhere.iterdir())  # run from an unrelated folder, it wrote nothing there
