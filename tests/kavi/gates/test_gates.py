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


def _cache_files(cache: Path) -> dict[str, bytes]:
    return {str(p.relative_to(cache)): p.read_bytes() for p in sorted(cache.rglob("*")) if p.is_file()}


def test_on_a_warm_cache_each_mypy_check_has_its_own_copy_and_leaves_the_cache_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mypy's cache is not safe for two processes at once: on a warm cache each check takes a private copy under the
    lock and runs without holding it (another verification's mypy does not wait for this one), and the shared cache
    is the same afterwards; a type error is still found."""
    import fcntl

    from kavi.gates import tools
    from kavi.sandbox.runner import Limits, SandboxResult

    cache_root = warm_mypy_cache_root(tmp_path / "mypy")
    assert tools.mypy_cache_warm(cache_root)
    cache = tools.mypy_cache_dir(cache_root)
    before = _cache_files(cache)
    held_during_run: list[bool] = []
    real = tools._run_mypy

    def probing(work: Path, rel: str, used: Path, lim: Limits) -> SandboxResult:
        assert used != cache and used.is_dir()  # a copy, not the shared cache
        with (cache.parent / f"{cache.name}.lock").open("w") as probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held_during_run.append(False)
            except BlockingIOError:
                held_during_run.append(True)
        return real(work, rel, used, lim)

    monkeypatch.setattr(tools, "_run_mypy", probing)
    # A module the warm-up did not check (decimal): the copy gets its entries, the shared cache does not.
    good = SKILL.replace("import re\n", "import re\nfrom decimal import Decimal\n").replace(
        "lines = len(text.splitlines())", "lines = int(Decimal(len(text.splitlines())))")
    bad = SKILL.replace("lines = len(text.splitlines())", "lines: int = text.splitlines()")
    for name, source, ok in (("good", good, True), ("bad", bad, False)):
        work = tmp_path / name
        (work / "skills").mkdir(parents=True)
        (work / "skills" / "word_count.py").write_text(source)
        result = tools.mypy_gate(work, "skills/word_count.py", cache_root, Limits(wall_s=120))
        assert result.ok is ok, (name, result.reason, result.messages)
        assert ok or any("[assignment]" in m for m in result.messages), result.messages
        assert not list(tmp_path.glob("*.mypy-cache"))  # the copy is gone
    assert held_during_run == [False, False]
    assert _cache_files(cache) == before
