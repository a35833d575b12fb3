"""The example proposals and their recorded answers are package data of the core: a gate job never sees them."""

import json
import sys
from pathlib import Path

import pytest

import kavi
from kavi.sandbox import jail
from kavi.sandbox.runner import Limits
from kavi.sandbox.warm import run_warm
from tests.factories import require_gate_sandbox

pytestmark = pytest.mark.containment

EXAMPLES = Path(kavi.__file__).resolve().parent / "examples"
PROBE = """
import json, os, sys
out = {}
for key, path in json.loads(sys.argv[1]).items():
    try:
        out[key] = sorted(os.listdir(path)) if os.path.isdir(path) else open(path, encoding="utf-8").read()
    except OSError as err:
        out[key] = f"blocked: {type(err).__name__}"
print("KAVI-PROBE:" + json.dumps(out))
"""


def test_a_gate_job_sees_neither_the_example_proposals_nor_their_answers(tmp_path: Path) -> None:
    require_gate_sandbox()
    holdout_file = EXAMPLES / "proposals" / "word_count.yaml"
    answer_file = EXAMPLES / "answers" / "word_count" / "1" / "skill.py"
    assert EXAMPLES in jail.hidden_package_dirs()
    assert "holdout_examples" in holdout_file.read_text(encoding="utf-8")  # what there is to hide, on the host
    paths = {"examples": str(EXAMPLES), "proposal": str(holdout_file), "answer": str(answer_file)}
    res = run_warm([sys.executable, "-c", PROBE, json.dumps(paths)], cwd=tmp_path / "job", limits=Limits(wall_s=60))
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("KAVI-PROBE:")), None)
    assert line is not None, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    seen = json.loads(line[len("KAVI-PROBE:"):])
    assert seen["examples"] == [], seen  # an empty folder in its place
    assert seen["proposal"].startswith("blocked:") and seen["answer"].startswith("blocked:"), seen
    assert "holdout_examples" not in res.stdout + res.stderr
