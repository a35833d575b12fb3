"""The builder's tests, run with coverage in one sandboxed process: the pytest gate and the coverage gate."""

import ast
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from kavi_assets.gates.types import GATE_COVERAGE, GATE_PYTEST, GateResult
from kavi_assets.lifecycle import Verdict
from kavi_assets.sandbox.runner import Limits, SandboxResult
from kavi_assets.sandbox.warm import run_warm

PYTEST_INI = "[pytest]\naddopts = -p no:cacheprovider\n"


def _junit(path: Path) -> tuple[int, list[str]]:
    """Tests collected, and a line per failed or errored test with its first message lines."""
    if not path.exists():
        return 0, []
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return 0, ["the test report could not be parsed"]
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = sum(int(s.get("tests", "0")) for s in suites)
    failed: list[str] = []
    for case in root.iter("testcase"):
        for tag in ("failure", "error"):
            el = case.find(tag)
            if el is not None:
                text = (el.get("message") or el.text or "").strip().splitlines()
                first = " / ".join(t.strip() for t in text[:3])[:300]
                failed.append(f"{case.get('classname', '')}::{case.get('name', '')} {tag}: {first}")
    return total, failed


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


def _coverage_percent(data_file: Path, skill_file: Path) -> tuple[float | None, list[int]]:
    import coverage

    if not data_file.exists():
        return None, []
    cov = coverage.Coverage(data_file=str(data_file))
    cov.load()
    try:
        _, statements, _, missing, _ = cov.analysis2(str(skill_file))
    except coverage.CoverageException:
        return 0.0, []
    body = _body_lines(skill_file.read_text(encoding="utf-8", errors="replace"))
    measured = [ln for ln in statements if ln in body]
    if not measured:
        return 100.0, []
    missed = [ln for ln in missing if ln in body]
    return 100.0 * (len(measured) - len(missed)) / len(measured), missed


def pytest_and_coverage(work: Path, name: str, limits: Limits, coverage_min: float) -> tuple[GateResult, GateResult]:
    (work / "pytest.ini").write_text(PYTEST_INI)
    junit = work / ".kavi-junit.xml"
    data = work / ".kavi-coverage"
    test_rel = f"tests/test_skill_{name}.py"
    t0 = time.monotonic()
    res: SandboxResult = run_warm(
        [sys.executable, "-m", "coverage", "run", f"--data-file={data}", "--source=skills", "-m", "pytest", "-q",
         "-c", "pytest.ini", "--rootdir", ".", f"--junitxml={junit}", "--no-header", test_rel],
        cwd=work, limits=limits, env_extra={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    duration = time.monotonic() - t0
    details = {"returncode": res.returncode, "isolation": res.isolation, "timed_out": res.timed_out}
    tail = [ln for ln in (res.stdout + res.stderr).splitlines() if ln.strip()][-15:]
    total, failed = _junit(junit)
    if res.timed_out:
        pt = GateResult(GATE_PYTEST, Verdict.FAILED, f"timed out after {limits.wall_s:.0f}s (the run was killed)",
                        duration, tail, details)
    elif res.killed_by_signal:
        pt = GateResult(GATE_PYTEST, Verdict.FAILED, f"the test process was killed by signal {res.killed_by_signal}",
                        duration, tail, details)
    elif total == 0 or res.returncode == 5:
        pt = GateResult(GATE_PYTEST, Verdict.FAILED, "zero tests collected", duration, tail,
                        {**details, "zero_tests": True})
    elif res.returncode == 0 and not failed:
        pt = GateResult(GATE_PYTEST, Verdict.PASSED, f"{total} tests passed", duration, [], {**details, "tests": total})
    else:
        reason = f"{len(failed)} of {total} tests failed" if failed else f"pytest exited {res.returncode}"
        pt = GateResult(GATE_PYTEST, Verdict.FAILED, reason, duration, failed or tail, {**details, "tests": total})
    if pt.verdict is not Verdict.PASSED and total == 0:
        cv = GateResult(GATE_COVERAGE, Verdict.OMITTED, "not measured: the tests did not run", 0.0)
        return pt, cv
    t1 = time.monotonic()  # the coverage run is the pytest run; this gate's own time is reading its data
    percent, missing = _coverage_percent(data, work / "skills" / f"{name}.py")
    if percent is None:
        return pt, GateResult(GATE_COVERAGE, Verdict.OMITTED, "not measured: no coverage data was written",
                              time.monotonic() - t1)
    ok = percent >= coverage_min
    cv = GateResult(
        GATE_COVERAGE, Verdict.PASSED if ok else Verdict.FAILED,
        f"{percent:.1f}% of the function bodies in skills/{name}.py covered (minimum {coverage_min:.0f}%)",
        time.monotonic() - t1,
        [] if ok else [f"skills/{name}.py lines not run by the tests: {', '.join(map(str, missing[:30]))}"],
        {"percent": round(percent, 2), "missing_lines": missing},
    )
    return pt, cv
