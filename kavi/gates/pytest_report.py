"""A pytest plugin, loaded by the pytest gate inside its sandbox (`-p kavi.gates.pytest_report`), that
measures coverage of the skill file and reports the run to the forge on one line of the original stdout.

Neither verdict is read from a file any more: the builder's tests run in the job's writable directory, where
they could plant a junit report or a coverage data file of their own. Instead:

- The job (a nonce and the skill file's relative path) arrives on stdin, a pipe the forge writes and closes.
  It is read to the end in `pytest_load_initial_conftests` (before pytest starts capturing, and before any
  conftest or test module is imported), and stdin is then replaced with /dev/null: nothing of it is left.
- The original stdout is duplicated at the same moment, before pytest or a test can replace fd 1.
- Coverage starts through its Python API (measuring the skills folder, no data file written anywhere) before
  the test modules, and so the skill, are imported: lines run at import are recorded as under `coverage run`,
  and the forge counts only the lines inside function bodies, as before. The skill contract's own modules
  (pydantic, `kavi_assets.skills.base`) are imported just before it starts, so their import is not traced.
- Per-test outcomes come from pytest's hooks. At the end of the session one line, `RESULT_PREFIX`, the nonce,
  `:` and a JSON object (tests collected; passed, failed and errored tests with bounded messages; the skill
  file's statements and missing lines), goes to the duplicated stdout. The forge reads only the last line
  carrying its nonce; a missing or garbled line fails the pytest gate.

What this does not do: the builder's tests run in this same process, after this plugin has started. Code in
them can reach the plugin's objects (the nonce, the duplicated descriptor, the coverage tracer) and report
anything. So pytest and coverage remain the builder's own evidence, as they always were: what changed is
that faking them now takes code that reaches into the test process itself, not a file dropped beside it. The
forge's trust rests on the checks the builder's code cannot reach: acceptance (the proposal's examples and
holdouts, compared outside the sandbox, on a pristine copy of the skill) and the static gates (ruff, mypy,
policy, invariants) on the verified bytes.
"""

import contextlib
import importlib
import json
import os
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from kavi.gates.pytest_result import RESULT_PREFIX

MAX_JOB_BYTES = 64 * 1024
MAX_LISTED = 200  # tests listed per outcome; the counts are always complete
MAX_MESSAGE = 300
MAX_NODEID = 200
PLUGIN_NAME = "kavi-pytest-report"
# What every skill imports (its contract), imported before coverage starts: see _Reporter.start_coverage.
CONTRACT_MODULES: tuple[str, ...] = ("pydantic", "kavi_assets.skills.base")


def _read_job() -> dict[str, Any] | None:
    """The forge's job from stdin, read to its end (the forge closes the pipe); then stdin is /dev/null."""
    if os.isatty(0):
        return None
    data = bytearray()
    try:
        while len(data) <= MAX_JOB_BYTES:
            chunk = os.read(0, 65536)
            if not chunk:
                break
            data.extend(chunk)
    except OSError:
        return None
    finally:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
    if len(data) > MAX_JOB_BYTES:
        return None
    try:
        job = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(job, dict) or not isinstance(job.get("nonce"), str) or not isinstance(job.get("skill"), str):
        return None
    return job


def _first_lines(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " / ".join(lines[:3])[:MAX_MESSAGE]


def _message(report: pytest.CollectReport | pytest.TestReport) -> str:
    """The first lines of the failure: the assertion or exception message where pytest has one."""
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return _first_lines(str(crash.message))
    text = str(longrepr or "")
    errors = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    return _first_lines("\n".join(errors) if errors else text)


class _Reporter:
    def __init__(self, nonce: str, skill: Path, out_fd: int) -> None:
        self.nonce = nonce
        self.skill = skill
        self.out_fd = out_fd
        self.collected = 0
        self.counts = {"passed": 0, "failed": 0, "errors": 0, "collect_errors": 0, "skipped": 0}
        self.failing: set[str] = set()  # distinct tests (or modules) that failed or errored in any phase
        self.passed: list[str] = []
        self.failed: list[dict[str, str]] = []
        self.errors: list[dict[str, str]] = []
        self.cov: Any = None
        self.coverage_error: str | None = None
        self.done = False

    def start_coverage(self) -> None:
        # Every skill imports its contract (pydantic, kavi_assets.skills.base): imported here, before the tracer
        # starts, their hundreds of functions and classes are not traced on the way in.
        # Nothing of the skill is imported yet, and only the skills folder is measured: the coverage figures are the
        # same.
        # (Where they cannot be imported, the skill's own import fails in the tests, as it would have anyway.)
        for module in CONTRACT_MODULES:
            with contextlib.suppress(ImportError):
                importlib.import_module(module)
        try:
            import coverage

            cov = coverage.Coverage(data_file=None, config_file=False, source=[str(self.skill.parent)],
                                    branch=False)
            cov.set_option("run:disable_warnings", ["no-data-collected", "module-not-imported",
                                                    "module-not-measured", "already-imported"])
            cov.start()
            self.cov = cov
        except Exception as err:  # reported: the forge fails the coverage gate with this reason
            self.coverage_error = f"coverage could not start: {type(err).__name__}: {str(err)[:200]}"

    def _coverage(self) -> dict[str, Any]:
        if self.cov is None:
            return {"error": self.coverage_error or "coverage did not start"}
        try:
            self.cov.stop()
            _, statements, _, missing, _ = self.cov.analysis2(str(self.skill))
        except Exception as err:
            return {"error": f"{type(err).__name__}: {str(err)[:200]}"}
        return {"statements": sorted(int(n) for n in statements), "missing": sorted(int(n) for n in missing)}

    def _entry(self, report: pytest.CollectReport | pytest.TestReport, when: str) -> dict[str, str]:
        return {"nodeid": report.nodeid[:MAX_NODEID], "when": when, "message": _message(report)}

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.counts["collect_errors"] += 1
            self.failing.add(report.nodeid)
            if len(self.errors) < MAX_LISTED:
                self.errors.append(self._entry(report, "collect"))

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            kind, listed = ("failed", self.failed) if report.when == "call" else ("errors", self.errors)
            self.counts[kind] += 1
            self.failing.add(report.nodeid)
            if len(listed) < MAX_LISTED:
                listed.append(self._entry(report, report.when))
        elif report.skipped:
            self.counts["skipped"] += 1
        elif report.when == "call":
            self.counts["passed"] += 1
            if len(self.passed) < MAX_LISTED:
                self.passed.append(report.nodeid[:MAX_NODEID])

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """After the session's fixtures are torn down, before the terminal summary."""
        if self.done:
            return
        self.done = True
        result = {
            "collected": self.collected,
            "counts": {**self.counts, "failing_tests": len(self.failing)},
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "exitstatus": int(exitstatus),
            "coverage": self._coverage(),
        }
        line = ("\n" + RESULT_PREFIX + self.nonce + ":" + json.dumps(result) + "\n").encode()
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self.out_fd, view):]
        except OSError:
            pass
        finally:
            os.close(self.out_fd)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    """Before pytest starts capturing (which puts /dev/null on fd 0 and a file on fd 1) and before any conftest
    or test module is imported: take the job, keep the real stdout, start coverage."""
    if not early_config.pluginmanager.has_plugin(PLUGIN_NAME):
        job = _read_job()
        if job is not None:  # else not started by the forge: the forge fails a run that never reports
            reporter = _Reporter(job["nonce"], Path(job["skill"]).resolve(), os.dup(1))
            early_config.pluginmanager.register(reporter, PLUGIN_NAME)
            reporter.start_coverage()
    return (yield)
