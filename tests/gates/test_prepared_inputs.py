"""The differential gate's generated inputs, prepared while a build waits for its model (issue 13): the same inputs
as generated in the gate, taken once by the next verification of the same proposal, case count and seed only."""

from pathlib import Path

import pytest
import yaml

from kavi_assets.gates import runner
from kavi_assets.gates.differential import EvidenceConfig, evidence_seed
from kavi_assets.gates.runner import GateConfig, prepare_generated_inputs, run_gates
from kavi_assets.proposals.model import Proposal

ANSWERS = Path(__file__).resolve().parents[2] / "examples" / "answers"
SKILL = (ANSWERS / "word_count" / "1" / "skill.py").read_bytes()
TESTS = (ANSWERS / "word_count" / "1" / "test.py").read_bytes()


@pytest.fixture(scope="module")
def word_count() -> Proposal:
    path = ANSWERS.parent / "proposals" / "word_count.yaml"
    return Proposal.model_validate(yaml.safe_load(path.read_text()))


@pytest.fixture(autouse=True)
def _nothing_prepared() -> None:
    with runner._prepared_lock:
        runner._prepared.clear()


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = runner._generate

    def counted(proposal: Proposal, evidence: EvidenceConfig, seed: int) -> tuple[list[dict[str, object]], str]:
        calls.append(seed)
        return real(proposal, evidence, seed)

    monkeypatch.setattr(runner, "_generate", counted)
    return calls


def test_prepared_inputs_are_the_gates_own_and_taken_once(word_count: Proposal, monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    evidence = EvidenceConfig(max_cases=12)
    seed = evidence_seed(word_count, evidence)
    fresh = runner._generate(word_count, evidence, seed)
    calls = _counting(monkeypatch)
    assert prepare_generated_inputs(word_count, 12)
    assert not prepare_generated_inputs(word_count, 12)  # already in the making
    cases, note, seconds = runner._generated_inputs(word_count, evidence, seed)
    assert (cases, note) == fresh and seconds >= 0
    assert calls == [seed]  # generated once, in the background
    runner._generated_inputs(word_count, evidence, seed)  # taken: the next verification generates its own
    assert calls == [seed, seed]


def test_other_settings_do_not_take_them(word_count: Proposal, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    assert prepare_generated_inputs(word_count, 12)
    evidence = EvidenceConfig(max_cases=5)
    cases, _note, _s = runner._generated_inputs(word_count, evidence, evidence_seed(word_count, evidence))
    assert len(cases) <= 5 and len(calls) == 2  # a different case count: generated again
    other = EvidenceConfig(max_cases=12, seed=7)
    runner._generated_inputs(word_count, other, 7)
    assert calls[-1] == 7
    off = EvidenceConfig(enabled=False, skipped_reason="not at this level", max_cases=12)
    assert runner._generated_inputs(word_count, off, evidence_seed(word_count, off))[0] == []


def test_a_verification_uses_the_prepared_inputs(tmp_path: Path, word_count: Proposal,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    assert prepare_generated_inputs(word_count, 10)
    files = {"skills/word_count.py": SKILL, "tests/test_skill_word_count.py": TESTS}
    config = GateConfig(wall_s=60, mypy_cache_root=tmp_path / "mypy", evidence=EvidenceConfig(max_cases=10))
    out = run_gates(tmp_path / "gates", word_count, files, config)
    assert out.passed, [(r.gate, r.reason) for r in out.results if not r.ok]
    differential = next(r for r in out.results if r.gate == "differential")
    assert differential.details["generated"] > 0
    assert len(calls) == 1  # the verification generated nothing itself
