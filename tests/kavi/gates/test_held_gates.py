"""A build's pytest and mypy jobs started ahead of its verification (kavi.gates.runner.hold_gate_jobs) give the
verdicts a verification without them gives, passing and failing, and the verification takes them."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kavi.gates.runner import GateConfig, hold_gate_jobs, run_gates
from kavi.proposals.model import Proposal, parse_proposal
from kavi.sandbox import held
from tests.factories import REPO, require_gate_sandbox, warm_mypy_cache_root

ANSWERS = REPO / "kavi" / "examples" / "answers"
SKILL = (ANSWERS / "word_count" / "1" / "skill.py").read_text()
TESTS = (ANSWERS / "word_count" / "1" / "test.py").read_text()
CASES = {
    "good": (SKILL, TESTS),
    "a failing test": (SKILL, TESTS + "\n\ndef test_wrong() -> None:\n    assert 1 == 2\n"),
    "a type error": (SKILL.replace("lines = len(text.splitlines())", "lines: int = text.splitlines()"), TESTS),
    "low coverage": (SKILL, "from skills.word_count import WordCount\n\n\ndef test_name() -> None:\n"
                            "    assert WordCount.name\n"),
}


@pytest.fixture(scope="module")
def proposal(word_count_spec: Callable[..., dict[str, Any]]) -> Proposal:
    return parse_proposal(word_count_spec())


@pytest.mark.parametrize("case", sorted(CASES))
def test_held_jobs_give_the_verdicts_of_fresh_ones(tmp_path: Path, proposal: Proposal, case: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    require_gate_sandbox()
    skill, tests = CASES[case]
    files = {"skills/word_count.py": skill.encode(), "tests/test_skill_word_count.py": tests.encode()}
    config = GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy"))
    fresh = run_gates(tmp_path / "fresh" / "gates", proposal, files, config)
    taken: list[str] = []
    real_take = held.take

    def spying(job: held.JobShape) -> held.HeldJob | None:
        got = real_take(job)
        if got is not None:
            taken.append(job.cwd.name)
        return got

    monkeypatch.setattr(held, "take", spying)
    root = tmp_path / "ahead" / "gates"
    assert hold_gate_jobs(root, "word_count", config) == ["pytest", "mypy"]
    ahead = run_gates(root, proposal, files, config)
    assert sorted(taken) == ["pytest", "static"]
    assert not held.holds(root / "pytest") and not held.holds(root / "static")
    assert [(r.gate, r.verdict) for r in ahead.results] == [(r.gate, r.verdict) for r in fresh.results]
    # What the held jobs report, word for word (other gates' reasons carry timings).
    assert [(r.reason, r.messages) for r in ahead.results if r.gate in ("pytest", "coverage", "mypy")] == \
        [(r.reason, r.messages) for r in fresh.results if r.gate in ("pytest", "coverage", "mypy")]
    assert ahead.passed is fresh.passed is (case == "good")
    assert ahead.isolation["interpreter"] == held.HELD_INTERPRETER
    assert {k: v for k, v in ahead.isolation.items() if k != "interpreter"} == \
        {k: v for k, v in fresh.isolation.items() if k != "interpreter"}
