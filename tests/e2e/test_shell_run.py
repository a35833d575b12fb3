"""The README's shell command for a forge run gives a tidy, tagged run — a run of the
`forge` job with `kavi/trigger`, INFO lines and no DEBUG flood, no warning about `dg` — and works as written."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import REPO

ROOT = REPO
pytestmark = pytest.mark.slow


def _readme_block() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    block = next(b for b in blocks if "dagster job execute" in b)
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_the_readme_shell_run_is_tidy_and_tagged(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAVI_", "DAGSTER_", "PYTHONWARNINGS"))}
    env.update(KAVI_HOME=str(tmp_path / "home"), KAVI_RECORDED_SPEED="0")
    bindir = Path(sys.executable).parent
    commands = []
    for line in _readme_block():
        argv = shlex.split(line)
        if argv[0] == "export":
            for assignment in argv[1:]:
                key, value = assignment.split("=", 1)
                env[key] = str(tmp_path / "dagster") if key == "DAGSTER_HOME" else value
            continue
        exe = shutil.which(argv[0], path=str(bindir))
        assert exe, f"{argv[0]} is not installed beside {sys.executable}"
        commands.append([exe, *argv[1:]])
    assert env.get("PYTHONWARNINGS") and [c[1:3] for c in commands][-1] == ["job", "execute"], commands

    outputs = []
    for argv in commands:
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, (argv, proc.stdout[-2000:], proc.stderr[-2000:])
        outputs.append(proc.stdout + proc.stderr)
    out = outputs[-1]
    assert " - DEBUG - " not in out, out[:3000]
    assert "SupersessionWarning" not in out and "'dg " not in out, out[:3000]
    assert "Traceback" not in out, out[:3000]
    # The verdict is in the INFO/WARNING lines (the recorded model's word_count passes or fails acceptance).
    assert re.search(r"word_count attempt 1 \(build word_count-a1-[0-9a-f]+\)", out), out[:3000]
    assert len(out.splitlines()) <= 10, out

    import dagster as dg

    with dg.DagsterInstance.from_config(str(tmp_path / "dagster")) as instance:
        runs = instance.get_runs()
        assert len(runs) == 1
        run = runs[0]
        assert run.job_name == "forge" and run.status is dg.DagsterRunStatus.SUCCESS
        assert run.tags["kavi/trigger"] == "shell" and run.tags["dagster/partition"] == "word_count"
        # The UI still has every event of the run, DEBUG ones included.
        assert any(e.level == 10 for e in instance.all_logs(run.run_id))
