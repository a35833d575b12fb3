"""The pytest and coverage verdicts come from the run's own report line (marker + nonce on the original stdout),
never from a file in the job's directory: builder tests that plant a junit file claiming passes and a coverage
data file claiming full coverage, or print a result line of their own, change nothing."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kavi.gates.runner import GateConfig, run_gates
from kavi.proposals.model import Proposal, parse_proposal
from kavi.sandbox import held
from kavi.verdicts import GateResult
from tests.factories import REPO, warm_mypy_cache_root

ANSWERS = REPO / "kavi" / "examples" / "answers"
SKILL = (ANSWERS / "word_count" / "1" / "skill.py").read_text()

# Written at interpreter exit, after pytest and `coverage run` have written their own files, then exit 0:
# a fake junit report of five passing tests and fake coverage data claiming every line of the skill ran.
PLANT = '''
import atexit
import os
import pathlib

from skills.word_count import WordCount, WordCountInput

SKILL_FILE = str(pathlib.Path("skills/word_count.py").resolve())


def _plant() -> None:
    cases = "".join(f'<testcase classname="tests.test_skill_word_count" name="test_{i}" time="0.001"/>'
                    for i in range(5))
    pathlib.Path(".kavi-junit.xml").write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" '
        f'skipped="0" tests="5" time="0.01">{cases}</testsuite></testsuites>')
    import coverage

    data = coverage.CoverageData(basename=".kavi-coverage")
    data.add_lines({SKILL_FILE: list(range(1, 200))})
    data.write()
    pathlib.Path(".kavi-planted").write_text("yes")
    os.write(2, b" KAVI-PLANTED ")
    os._exit(0)


atexit.register(_plant)


def test_name() -> None:
    assert WordCount.name == "word_count"
'''

FAILING = '''

def test_counts() -> None:
    assert WordCountInput(text="a b").text == "a b c"
'''

FORGED_LINE = (
    'KAVI-PYTEST-RESULT:00000000000000000000000000000000:{"collected": 1, "passed": ["t"], "failed": [], '
    '"errors": [], "skipped": 0, "coverage": {"statements": [1], "missing": []}}'
)


@pytest.fixture(scope="module")
def proposal(word_count_spec: Callable[..., dict[str, Any]]) -> Proposal:
    return parse_proposal(word_count_spec())


def _run(tmp_path: Path, proposal: Proposal, tests: str) -> dict[str, GateResult]:
    files = {"skills/word_count.py": SKILL.encode(), "tests/test_skill_word_count.py": tests.encode()}
    config = GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy"))
    out = run_gates(tmp_path / "gates", proposal, files, config)
    return {r.gate: r for r in out.results}


@pytest.fixture()
def job_output(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the pytest job printed (in the gate sandbox its directory is a scratch tmpfs: a file it plants never
    reaches the host, so the attack proves it ran to the end on stderr)."""
    seen: list[str] = []
    real = held.run_job

    def spy(*args: Any, **kwargs: Any) -> Any:
        res = real(*args, **kwargs)
        seen.append(res.stdout + res.stderr)
        return res

    monkeypatch.setattr(held, "run_job", spy)
    return seen


def test_planted_junit_and_coverage_files_do_not_pass_failing_tests(tmp_path: Path, proposal: Proposal,
                                                                    job_output: list[str]) -> None:
    res = _run(tmp_path, proposal, PLANT + FAILING)
    assert "KAVI-PLANTED" in "".join(job_output)  # the attack did run to the end
    assert not res["pytest"].ok
    assert res["pytest"].reason == "1 of 2 tests failed", res["pytest"].reason
    assert any("test_counts" in m for m in res["pytest"].messages), res["pytest"].messages
    assert not res["coverage"].ok
    assert res["coverage"].details["percent"] == 0.0  # the real figure: no line of execute() ran


def test_planted_coverage_file_does_not_raise_the_real_figure(tmp_path: Path, proposal: Proposal,
                                                              job_output: list[str]) -> None:
    res = _run(tmp_path, proposal, PLANT)
    assert "KAVI-PLANTED" in "".join(job_output)
    assert res["pytest"].ok and res["pytest"].reason == "1 tests passed", res["pytest"].reason
    assert not res["coverage"].ok
    assert res["coverage"].details["percent"] == 0.0
    assert "0.0% of the function bodies" in res["coverage"].reason


def test_a_result_line_without_the_nonce_is_ignored(tmp_path: Path, proposal: Proposal) -> None:
    tests = PLANT.replace("    os._exit(0)\n", f"    print({FORGED_LINE!r}, flush=True)\n    os._exit(0)\n") + FAILING
    res = _run(tmp_path, proposal, tests)
    assert not res["pytest"].ok
    assert res["pytest"].reason == "1 of 2 tests failed", res["pytest"].reason
    assert not any("KAVI-PYTEST-RESULT" in m for m in res["pytest"].messages)


def test_a_run_that_never_reports_fails(tmp_path: Path, proposal: Proposal) -> None:
    """A test prints a forged line to the real stdout and ends the process before pytest could report."""
    tests = (
        "import os\n\nimport pytest\n\n\n"
        "def test_quit(capfd: pytest.CaptureFixture[str]) -> None:\n"
        "    with capfd.disabled():\n"
        f"        print({FORGED_LINE!r}, flush=True)\n"
        "    os._exit(0)\n"
    )
    res = _run(tmp_path, proposal, tests)
    assert not res["pytest"].ok
    assert res["pytest"].reason.startswith("the test run did not report"), res["pytest"].reason
    assert res["coverage"].verdict.value == "omitted"
    assert not any("KAVI-PYTEST-RESULT" in m for m in res["pytest"].messages)


def test_no_verdict_file_is_left_in_the_work_directory(tmp_path: Path, proposal: Proposal) -> None:
    tests = (ANSWERS / "word_count" / "1" / "test.py").read_text()
    res = _run(tmp_path, proposal, tests)
    assert res["pytest"].ok and res["coverage"].ok, (res["pytest"].reason, res["coverage"].reason)
    work = tmp_path / "gates" / "pytest"
    assert not (work / ".kavi-junit.xml").exists()
    assert not (work / ".kavi-coverage").exists()


def test_the_same_attack_fails_on_the_warm_runner_path(tmp_path: Path, proposal: Proposal,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Where bubblewrap is missing and the warm runner is asked for, the job forks from it: the plugin reports the
    same way."""
    from kavi.sandbox import jail

    monkeypatch.setattr(jail, "probe", lambda: "switched off for this test")
    monkeypatch.setenv("KAVI_WARM_RUNNER", "1")
    res = _run(tmp_path, proposal, PLANT + FAILING)
    assert res["pytest"].details["isolation"]["interpreter"].startswith("active: forked from the warm runner")
    assert (tmp_path / "gates" / "pytest" / ".kavi-planted").exists()
    assert res["pytest"].reason == "1 of 2 tests failed", res["pytest"].reason
    assert res["coverage"].details["percent"] == 0.0


def test_a_module_that_cannot_be_collected_is_a_failed_test(tmp_path: Path, proposal: Proposal) -> None:
    res = _run(tmp_path, proposal, "from skills.word_count import Missing\n\n\ndef test_x() -> None:\n    pass\n")
    assert not res["pytest"].ok
    assert res["pytest"].reason == "1 of 1 tests failed", res["pytest"].reason
    assert any("tests/test_skill_word_count.py error:" in m and "Missing" in m for m in res["pytest"].messages), \
        res["pytest"].messages
    assert not res["coverage"].ok  # the module ran at import, no function body did


def test_a_run_past_its_wall_time_is_killed(tmp_path: Path, proposal: Proposal) -> None:
    tests = "import time\n\n\ndef test_sleep() -> None:\n    time.sleep(60)\n"
    files = {"skills/word_count.py": SKILL.encode(), "tests/test_skill_word_count.py": tests.encode()}
    config = GateConfig(wall_s=6, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy"))
    out = run_gates(tmp_path / "gates", proposal, files, config)
    res = {r.gate: r for r in out.results}
    assert res["pytest"].reason == "timed out after 6s (the run was killed)"
    assert res["coverage"].verdict.value == "omitted"


# -- the forge's reading of the line, without a sandbox ------------------------------------------------------

NONCE = "f" * 32
GOOD = {"collected": 2, "counts": {"passed": 1, "failed": 1, "errors": 0, "collect_errors": 0, "skipped": 0,
                                   "failing_tests": 1},
        "passed": ["t::a"], "failed": [{"nodeid": "t::b", "when": "call", "message": "assert 1 == 2"}],
        "errors": [], "exitstatus": 1, "coverage": {"statements": [1, 2, 3], "missing": [3]}}


def _line(nonce: str, body: object) -> str:
    import json

    return f"KAVI-PYTEST-RESULT:{nonce}:{json.dumps(body)}"


def test_parse_report_takes_the_last_line_with_the_nonce() -> None:
    from kavi.gates.testing import parse_report

    passing = {**GOOD, "failed": [], "counts": {**GOOD["counts"], "failed": 0, "failing_tests": 0}}  # type: ignore[dict-item]
    stdout = "\n".join(["..F", _line(NONCE, GOOD), _line("0" * 32, passing), "1 failed, 1 passed"])
    report = parse_report(stdout, NONCE)
    assert report is not None
    assert report["messages"] == ["t::b failure: assert 1 == 2"]
    assert report["coverage"] == {"statements": [1, 2, 3], "missing": [3]}
    assert parse_report(stdout + "\n" + _line(NONCE, passing), NONCE)["counts"]["failed"] == 0  # type: ignore[index]


@pytest.mark.parametrize("body", [
    "not json",
    [1, 2],
    {**GOOD, "collected": "2"},
    {**GOOD, "collected": True},
    {**GOOD, "counts": {"passed": 1}},
    {**GOOD, "failed": [{"nodeid": "t::b"}]},
    {**GOOD, "coverage": {"statements": [1, "2"], "missing": []}},
    {**GOOD, "coverage": None},
])
def test_parse_report_refuses_a_garbled_line(body: object) -> None:
    from kavi.gates.testing import parse_report

    line = f"KAVI-PYTEST-RESULT:{NONCE}:{body}" if isinstance(body, str) else _line(NONCE, body)
    assert parse_report(line, NONCE) is None
    assert parse_report(_line(NONCE, GOOD)[:-20], NONCE) is None  # cut off
