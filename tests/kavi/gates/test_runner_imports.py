"""What the acceptance runner imports: every gate job is a fresh interpreter, so each module it loads is paid for
once per job (twice per proposal: the acceptance gate and the independent implementation). httpx and its command
line client (click, rich, pygments) cost more than the rest of a job together; only a NETWORK skill needs them."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from kavi.gates.acceptance_runner import RESULT_PREFIX
from tests.factories import REPO

ROOT = REPO
# main() as `python -m` runs it, then what the interpreter holds, on stderr (the runner sends stdout elsewhere).
PROBE = ("import json, sys; from kavi.gates import acceptance_runner as r; r.main(); "
         "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
         "('httpx', 'click', 'rich', 'pygments'))), file=sys.stderr)")


def _job(tmp_path: Path, name: str) -> dict[str, Any]:
    spec = yaml.safe_load((ROOT / "kavi" / "examples" / "proposals" / f"{name}.yaml").read_text())
    data = (ROOT / "kavi" / "examples" / "answers" / name / "1" / "skill.py").read_bytes()
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / f"{name}.py").write_bytes(data)
    cases = [{"id": i, "input": ex["input"], "vault_files": ex.get("vault_files") or {},
              "http_responses": ex.get("http_responses") or {}, "secrets": ex.get("secrets") or {}}
             for i, ex in enumerate(spec["examples"])]
    return {"nonce": "n0nce", "skill_name": name, "skill_file": f"skills/{name}.py",
            "sha256": hashlib.sha256(data).hexdigest(), "side_effect_class": spec["side_effect_class"],
            "declared_secrets": spec.get("required_secrets") or [], "cases": cases,
            "expected": [ex["expected"] for ex in spec["examples"]]}


def _run(tmp_path: Path, name: str) -> tuple[list[dict[str, Any]], list[str]]:
    job = _job(tmp_path, name)
    expected = job.pop("expected")
    res = subprocess.run([sys.executable, "-c", PROBE], input=json.dumps(job).encode(), cwd=tmp_path,
                         capture_output=True, timeout=60, check=True)
    marker = f"{RESULT_PREFIX}n0nce:"
    payloads = [json.loads(ln[len(marker):]) for ln in res.stdout.decode().splitlines() if ln.startswith(marker)]
    results = [p["result"] for p in payloads if "result" in p]
    assert payloads[-1] == {"done": len(expected)}, payloads
    for entry, want in zip(results, expected, strict=True):
        assert entry["ran"], entry
        assert all(entry["output"][k] == v for k, v in want.items()), (entry, want)
    loaded = json.loads(res.stderr.decode().strip().splitlines()[-1])
    return results, loaded


def test_a_skill_without_network_runs_without_httpx(tmp_path: Path) -> None:
    results, loaded = _run(tmp_path, "word_count")
    assert results and loaded == []


def test_a_network_skill_gets_httpx_without_its_command_line_client(tmp_path: Path) -> None:
    results, loaded = _run(tmp_path, "http_get_json")
    assert results and "httpx" in loaded
    assert not [m for m in loaded if m.split(".")[0] in ("click", "rich", "pygments")], loaded


# -- the pytest gate ------------------------------------------------------------------------------------------------

# What the builder's test module finds already imported when pytest imports it: the skill contract's modules
# must be there (imported before coverage starts, so their import is not traced: every skill imports them).
PRELOAD_PROBE = '''import sys

PRELOADED = sorted(m for m in ("pydantic", "kavi_assets.skills.base") if m in sys.modules)


def test_the_contract_modules_came_before_the_tests() -> None:
    assert PRELOADED == ["kavi_assets.skills.base", "pydantic"], PRELOADED
'''


def test_the_pytest_gate_imports_the_skill_contract_before_coverage_starts(tmp_path: Path) -> None:
    from kavi.gates.testing import pytest_and_coverage
    from kavi.sandbox.runner import Limits

    answer = ROOT / "kavi" / "examples" / "answers" / "word_count" / "1"
    tests = PRELOAD_PROBE + "\n\n" + (answer / "test.py").read_text()
    (tmp_path / "skills").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "skills" / "word_count.py").write_bytes((answer / "skill.py").read_bytes())
    (tmp_path / "tests" / "test_skill_word_count.py").write_text(tests)
    pt, cov = pytest_and_coverage(tmp_path, "word_count", Limits(wall_s=60), 80.0)
    assert pt.ok, (pt.reason, pt.messages)
    # The skill's own lines are measured as before: its import comes after coverage started.
    assert cov.ok and cov.details["percent"] == 100.0, (cov.reason, cov.details)


def test_sandboxed_jobs_load_no_pydantic_plugins(tmp_path: Path) -> None:
    """pydantic looks for plugins in every installed distribution's entry points when the first model is built
    (a few ms per job, and third-party code in the job's process): a gate job needs none."""
    from kavi.sandbox.runner import Limits, run_sandboxed

    code = ("import os, pydantic; from pydantic.plugin import _loader; "
            "print(os.environ.get('PYDANTIC_DISABLE_PLUGINS'), list(_loader.get_plugins()))")
    res = run_sandboxed([sys.executable, "-c", code], cwd=tmp_path, limits=Limits(wall_s=60))
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["__all__", "[]"], res.stdout
