"""Code-running gates have filesystem isolation. A builder's test that writes to /tmp, to
$HOME and into the skills home is contained (the files never appear) and the pytest gate reports a failure;
the verification report's isolation metadata names the mount layer as active."""

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kavi.gates.runner import GateConfig, run_gates
from kavi.home import KaviHome
from kavi.proposals.model import parse_proposal
from kavi.sandbox import jail
from tests.factories import REPO, warm_mypy_cache_root

ANSWERS = REPO / "kavi" / "examples" / "answers" / "word_count" / "1"


@pytest.fixture(autouse=True)
def _needs_sandbox() -> None:
    if (problem := jail.probe()) is not None:
        if os.environ.get("KAVI_REQUIRE_SANDBOX") == "1":
            pytest.fail(problem)
        pytest.skip(problem)


def test_a_builders_test_cannot_write_outside_its_sandbox(kavi_home: KaviHome, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          word_count_spec: Callable[..., dict[str, Any]]) -> None:
    token = uuid.uuid4().hex
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    targets = [Path(f"/tmp/kavi-fault-{token}"), user_home / f"planted-{token}",
               kavi_home.root / "skills" / f"planted_{token}.py", kavi_home.root / f"planted-{token}.txt"]
    writes = "\n".join(f"    open({str(t)!r}, 'w').write('x')" for t in targets)
    tests = (ANSWERS / "test.py").read_text() + f"\n\ndef test_plant() -> None:\n{writes}\n"
    proposal = parse_proposal(word_count_spec())
    files = {"skills/word_count.py": (ANSWERS / "skill.py").read_bytes(),
             "tests/test_skill_word_count.py": tests.encode()}
    try:
        out = run_gates(kavi_home.sandboxes_dir / "b1" / "gates", proposal, files,
                        GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy")))
        pytest_gate = next(r for r in out.results if r.gate == "pytest")
        assert pytest_gate.verdict.value == "failed"
        assert any("test_plant" in m for m in pytest_gate.messages), pytest_gate.messages
        assert not out.passed
        assert [t for t in targets if t.exists()] == []
        assert out.isolation["mount"].startswith("active"), out.isolation
    finally:
        for t in targets:
            t.unlink(missing_ok=True)
