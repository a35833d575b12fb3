"""Two kavi processes starting at once on a fresh DAGSTER_HOME: before, both created Dagster's storage schema and
one died with a traceback ("alembic_version has more than one head"); the opening is now serialised."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import REPO

EXAMPLES = REPO / "kavi" / "examples" / "proposals"


@pytest.mark.slow
def test_two_kavi_processes_on_a_fresh_dagster_home(tmp_path: Path) -> None:
    env = {**os.environ, "KAVI_HOME": str(tmp_path / "home"), "DAGSTER_HOME": str(tmp_path / "dagster")}
    procs = [subprocess.Popen([sys.executable, "-m", "kavi_assets.cli", "propose", str(EXAMPLES / f"{name}.yaml")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for name in ("word_count", "slugify_title", "parse_duration", "write_note", "search_notes",
                          "summarize_note")]
    outs = [(p.wait(120), p.stdout.read() if p.stdout else "") for p in procs]
    for rc, out in outs:
        assert rc == 0, out
        assert "Traceback" not in out
