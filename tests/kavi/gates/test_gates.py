"""Each gate passing and failing, for real: ruff, mypy, pytest, zero tests, coverage, policy, invariants,
acceptance (including a skill that passes its own tests but fails a holdout example)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kavi.gates.runner import GateConfig, run_gates
from kavi.proposals.model import Proposal, parse_proposal
from kavi.verdicts import GateResult
from tests.factories import REPO, warm_mypy_cache_root

ANSWERS = REPO / "kavi" / "examples" / "answers"
SKILL = (ANSWERS / "word_count" / "1" / "skill.py").read_text()
TESTS = (ANSWERS / "word_count" / "1" / "test.py").read_text()


@pytest.fixture(scope="module")
def proposal(word_count_spec: Callable[..., dict[str, Any]]) -> Proposal:
    return parse_proposal(word_count_spec())


def _run(tmp_path: Path, proposal: Proposal, skill: str = SKILL, tests: str = TESTS) -> dict[str, GateResult]:
    files = {"skills/word_count.py": skill.encode(), "tests/test_skill_word_count.py": tests.encode()}
    config = GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy"))
    out = run_gates(tmp_path / "gates", proposal, files, config)
    return {r.gate: r for r in out.results}


def test_good_build_passes_every_gate(tmp_path: Path, proposal: Proposal) -> None:
    res = _run(tmp_path, proposal)
    # word_count's code holds nothing a mutant could change (no comparison, constant, branch or operator): the
    # mutation analysis says so instead of passing.
    adequacy = res.pop("adequacy")
    assert adequacy.verdict.value == "omitted" and adequacy.reason == "the skill has no function a mutant could change"
    assert {g: r.verdict.value for g, r in res.items()} == {g: "passed" for g in res}, \
        {g: (r.reason, r.messages) for g, r in res.items() if not r.ok}
    assert "3 tests passed" in res["pytest"].reason
    assert res["coverage"].details["percent"] >= 80


def test_ruff_failure_reports_codes(tmp_path: Path, proposal: Proposal) -> None:
    res = _run(tmp_path, proposal, SKILL.replace("import re\n", "import re\nimport string\n"))
    assert not res["ruff"].ok
    assert any("F401" in m and "skills/word_count.py" in m for m in res["ruff"].messages)


def test_mypy_failure_reports_error(tmp_path: Path, proposal: Proposal) -> None:
    bad = SKILL.replace("lines = len(text.splitlines())", "lines: int = text.splitlines()")
    res = _run(tmp_path, proposal, bad)
    assert not res["mypy"].ok
    assert any("error:" in m and "[assignment]" in m for m in res["mypy"].messages)


def test_failing_test_named(tmp_path: Path, proposal: Proposal) -> None:
    res = _run(tmp_path, proposal, tests=TESTS.replace("(4, 1, 19)", "(5, 1, 19)"))
    assert not res["pytest"].ok
    assert any("test_simple_sentence" in m for m in res["pytest"].messages)


def test_zero_tests_is_a_failure(tmp_path: Path, proposal: Proposal) -> None:
    res = _run(tmp_path, proposal, tests='"""no tests here"""\n')
    assert not res["pytest"].ok
    assert res["pytest"].reason == "zero tests collected"
    assert res["pytest"].details.get("zero_tests")


def test_low_coverage_fails(tmp_path: Path, proposal: Proposal) -> None:
    tests = "from skills.word_count import WordCount\n\n\ndef test_name() -> None:\n    assert WordCount.name\n"
    res = _run(tmp_path, proposal, tests=tests)
    assert res["pytest"].ok
    assert not res["coverage"].ok and "covered" in res["coverage"].reason


def test_policy_and_invariants_fail(tmp_path: Path, proposal: Proposal) -> None:
    bad = SKILL.replace("import re\n", "import re\nimport subprocess\n").replace(
        "SideEffectClass.READ_ONLY", "SideEffectClass.FILE_WRITE")
    res = _run(tmp_path, proposal, bad)
    assert not res["policy"].ok and any("POL-PROCESS" in m for m in res["policy"].messages)
    assert not res["invariants"].ok and any("INV-CLASS" in m for m in res["invariants"].messages)


def test_passes_own_tests_but_fails_holdout(tmp_path: Path, proposal: Proposal) -> None:
    skill = (ANSWERS / "word_count" / "1b" / "skill.py").read_text()
    tests = (ANSWERS / "word_count" / "1b" / "test.py").read_text()
    res = _run(tmp_path, proposal, skill, tests)
    assert res["pytest"].ok
    acc = res["acceptance"]
    assert not acc.ok
    assert acc.details["holdout_failed"] == 1
    # The builder learns how many holdout examples failed, never which.
    assert not any("one two" in m for m in acc.messages)
    assert "holdout" in " ".join(acc.messages)


def test_hostile_test_file_cannot_change_what_acceptance_sees(tmp_path: Path, proposal: Proposal) -> None:
    tests = TESTS + (
        "\n\ndef test_tamper() -> None:\n"
        "    import pathlib\n"
        "    pathlib.Path('skills/word_count.py').write_text('raise SystemExit(0)\\n')\n"
    )
    res = _run(tmp_path, proposal, tests=tests)
    assert res["acceptance"].ok, res["acceptance"].messages
