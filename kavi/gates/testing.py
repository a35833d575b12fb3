"""The builder's tests, with coverage, in one sandboxed pytest process: the pytest gate and the coverage gate.

Both verdicts come from one result line the run writes to its original stdout (see
`kavi.gates.pytest_report`, loaded as a plugin): marker, a fresh nonce the forge passed through stdin,
and a JSON report. Nothing is read from the job's directory, where the builder's tests could plant a junit
report or a coverage data file; the skill's body lines are taken from the verified bytes, read before the run,
and a skill file that changed while the tests ran fails the coverage gate. The report itself is still written
by the process the builder's tests run in: see the plugin's docstring for what that leaves.
"""

import ast
import hashlib
import json
import secrets
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kavi.gates.pytest_result import RESULT_PREFIX
from kavi.lifecycle import Verdict
from kavi.sandbox import held
from kavi.sandbox.runner import Limits, read_job_file
from kavi.verdicts import GATE_COVERAGE, GATE_PYTEST, GateResult

PYTEST_INI = "[pytest]\naddopts = -p no:cacheprovider\n"
PLUGIN = "kavi.gates.pytest_report"
# What the job imports before its stdin is read (kavi.sandbox.launch): pytest and the plugins it loads by default,
# coverage, the report plugin and the skill contract it imports before coverage starts.
PRELOAD = ("pytest", "_pytest.doctest", "_pytest.junitxml", "_pytest.pastebin", "_pytest.legacypath",
           "_pytest.unraisableexception", "_pytest.threadexception", "_pytest.faulthandler", "_pytest.helpconfig",
           "_pytest.setuponly", "_pytest.setupplan", "_pytest.skipping", "_pytest.stepwise", "_pytest.unittest",
           "_pytest.warnings", "pdb", "unittest", "difflib", "coverage", "pydantic", "kavi_assets.skills.base",
           PLUGIN)
ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
MAX_MESSAGES = 50
MAX_MESSAGE = 400
NO_REPORT = "the test run did not report"
COUNTS = ("passed", "failed", "errors", "collect_errors", "skipped", "failing_tests")


def _body_lines(source: str) -> set[int]:
    """Lines inside function bodies: importing the module runs everything else, so only these measure tests."""
    lines: set[int] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return lines
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    if isinstance(sub, ast.stmt):
                        lines.add(sub.lineno)
    return lines


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _entries(value: Any) -> list[str] | None:
    """'nodeid kind: message' per listed failure or error, or None if the list is not what the plugin writes."""
    if not isinstance(value, list):
        return None
    out = []
    for e in value:
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in ("nodeid", "when", "message")):
            return None
        kind = "failure" if e["when"] == "call" else "error"
        out.append(f"{e['nodeid']} {kind}: {e['message']}"[:MAX_MESSAGE])
    return out


def _lines(value: Any) -> list[int] | None:
    if not isinstance(value, list) or not all(_int(n) is not None for n in value):
        return None
    return [int(n) for n in value]


def parse_report(stdout: str, nonce: str) -> dict[str, Any] | None:
    """The last result line carrying `nonce`, checked field by field; None if there is none or it is garbled.

    Returns collected, counts (see COUNTS), messages (one per listed failure or error,
    failures first), exitstatus, and coverage: {"statements": [...], "missing": [...]} or {"error": str}."""
    marker = f"{RESULT_PREFIX}{nonce}:"
    line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith(marker)), None)
    if line is None:
        return None
    try:
        raw = json.loads(line[len(marker):])
    except json.JSONDecodeError:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("counts"), dict):
        return None
    collected, exitstatus = _int(raw.get("collected")), _int(raw.get("exitstatus"))
    counts = {k: _int(raw["counts"].get(k)) for k in COUNTS}
    failed, errors = _entries(raw.get("failed")), _entries(raw.get("errors"))
    if collected is None or exitstatus is None or failed is None or errors is None or None in counts.values():
        return None
    cov = raw.get("coverage")
    coverage: dict[str, Any]
    if isinstance(cov, dict) and isinstance(cov.get("error"), str):
        coverage = {"error": cov["error"][:MAX_MESSAGE]}
    elif isinstance(cov, dict):
        statements, missing = _lines(cov.get("statements")), _lines(cov.get("missing"))
        if statements is None or missing is None:
            return None
        coverage = {"statements": statements, "missing": missing}
    else:
        return None
    return {"collected": collected, "counts": counts, "messages": failed + errors, "exitstatus": exitstatus,
            "coverage": coverage}


def _coverage_percent(coverage: dict[str, Any], source: str) -> tuple[float, list[int]]:
    if "error" in coverage:  # the skill could not be analysed (as under `coverage run`: nothing measured)
        return 0.0, []
    body = _body_lines(source)
    measured = [ln for ln in coverage["statements"] if ln in body]
    if not measured:
        return 100.0, []
    missed = [ln for ln in coverage["missing"] if ln in body]
    return 100.0 * (len(measured) - len(missed)) / len(measured), missed


def _digest(path: Path) -> str | None:
    data = read_job_file(path)  # the tests could have swapped the file for a link or a FIFO
    return None if data is None else hashlib.sha256(data).hexdigest()


def pytest_job(work: Path, name: str, limits: Limits, files: Sequence[str]) -> held.JobShape:
    """The pytest job of `name`'s build (`files`: its relative paths) in `work`: a sandbox whose directory is a
    scratch tmpfs holding the build's files read-only."""
    argv = [sys.executable, "-m", "kavi.sandbox.launch", ",".join(PRELOAD), "pytest", "-q", "-c", "pytest.ini",
            "--rootdir", ".", "-p", PLUGIN, "--no-header", f"tests/test_skill_{name}.py"]
    return held.shape(argv, cwd=work, limits=limits, env_extra=ENV, scratch=True, files=files)


def hold_pytest(work: Path, name: str, files: Sequence[str], limits: Limits) -> bool:
    """Start the pytest job of `name`'s build ahead of it (kavi.sandbox.held), in `work` (a fresh, empty folder) with
    empty files at `files` (the build's relative paths): the verification writes the build's bytes into them in
    place."""
    for rel in files:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_bytes(b"")
    (work / "pytest.ini").write_text(PYTEST_INI)
    return held.hold(pytest_job(work, name, limits, files)) is not None


def pytest_and_coverage(work: Path, name: str, limits: Limits, coverage_min: float,
                        files: Sequence[str] = ()) -> tuple[GateResult, GateResult]:
    """Both gates from one run of the builder's tests on the files in `work` (`files`: the build's relative paths; a
    job held for exactly these runs them)."""
    (work / "pytest.ini").write_text(PYTEST_INI)
    skill_rel = f"skills/{name}.py"
    skill_bytes = (work / skill_rel).read_bytes()  # the verified bytes, before any test has run
    digest = hashlib.sha256(skill_bytes).hexdigest()
    nonce = secrets.token_hex(16)
    job = json.dumps({"nonce": nonce, "skill": skill_rel}).encode()
    t0 = time.monotonic()
    res = held.run_job(pytest_job(work, name, limits, files), job)
    duration = time.monotonic() - t0
    details: dict[str, Any] = {"returncode": res.returncode, "isolation": res.isolation, "timed_out": res.timed_out,
                               "sandbox_started": res.started}
    tail = [ln for ln in (res.stdout + res.stderr).splitlines()
            if ln.strip() and not ln.startswith(RESULT_PREFIX)][-15:]
    report = None if res.timed_out or res.killed_by_signal else parse_report(res.stdout, nonce)
    if res.timed_out:
        pt = GateResult(GATE_PYTEST, Verdict.FAILED, f"timed out after {limits.wall_s:.0f}s (the run was killed)",
                        duration, tail, details)
    elif res.killed_by_signal:
        pt = GateResult(GATE_PYTEST, Verdict.FAILED, f"the test process was killed by signal {res.killed_by_signal}",
                        duration, tail, details)
    elif report is None:
        pt = GateResult(GATE_PYTEST, Verdict.FAILED,
                        f"{NO_REPORT} (exit {res.returncode}): no readable result line carrying this run's nonce",
                        duration, tail, {**details, "reported": False})
    else:
        pt = _pytest_verdict(report, res.returncode, duration, tail, details)
    if report is None:
        why = "the tests did not run" if res.timed_out or res.killed_by_signal else "the test run did not report"
        return pt, GateResult(GATE_COVERAGE, Verdict.OMITTED, f"not measured: {why}", 0.0)
    if pt.verdict is not Verdict.PASSED and _total(report) == 0:
        return pt, GateResult(GATE_COVERAGE, Verdict.OMITTED, "not measured: the tests did not run", 0.0)
    t1 = time.monotonic()  # the coverage run is the pytest run; this gate's own time is judging its figures
    if _digest(work / skill_rel) != digest:
        return pt, GateResult(GATE_COVERAGE, Verdict.FAILED, "the skill file changed while the tests ran (its hash "
                              "no longer matches the verified bytes)", time.monotonic() - t1)
    coverage: dict[str, Any] = report["coverage"]
    percent, missing = _coverage_percent(coverage, skill_bytes.decode("utf-8", errors="replace"))
    ok = percent >= coverage_min
    messages = [] if ok else [f"{skill_rel} lines not run by the tests: {', '.join(map(str, missing[:30]))}"]
    if "error" in coverage:
        messages = [f"{skill_rel} could not be analysed: {coverage['error']}"]
    return pt, GateResult(
        GATE_COVERAGE, Verdict.PASSED if ok else Verdict.FAILED,
        f"{percent:.1f}% of the function bodies in {skill_rel} covered (minimum {coverage_min:.0f}%)",
        time.monotonic() - t1, messages, {"percent": round(percent, 2), "missing_lines": missing},
    )


def _total(report: dict[str, Any]) -> int:
    """Tests as junit counted them: the collected tests, and each module that failed to collect."""
    return int(report["collected"]) + int(report["counts"]["collect_errors"])


def _pytest_verdict(report: dict[str, Any], returncode: int, duration: float, tail: list[str],
                    details: dict[str, Any]) -> GateResult:
    total = _total(report)
    counts: dict[str, int] = report["counts"]
    failing = counts["failing_tests"]
    exitstatus = int(report["exitstatus"])
    if total == 0 or returncode == 5 or exitstatus == 5:
        return GateResult(GATE_PYTEST, Verdict.FAILED, "zero tests collected", duration, tail,
                          {**details, "zero_tests": True})
    details = {**details, "tests": total, "counts": counts}
    if returncode == 0 and exitstatus == 0 and not failing:
        skipped = f" ({counts['skipped']} skipped)" if counts["skipped"] else ""
        return GateResult(GATE_PYTEST, Verdict.PASSED, f"{total} tests passed{skipped}", duration, [], details)
    messages: list[str] = report["messages"][:MAX_MESSAGES]
    reason = f"{failing} of {total} tests failed" if failing else f"pytest exited {returncode or exitstatus}"
    return GateResult(GATE_PYTEST, Verdict.FAILED, reason, duration, messages or tail, details)
