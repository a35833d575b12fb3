"""The differential gate's generated inputs, prepared while a build waits for its model: the same inputs
as generated in the gate, taken once by the next verification of the same proposal, case count and seed only."""

from pathlib import Path

import pytest
import yaml

from kavi.gates import runner
from kavi.gates.differential import EvidenceConfig, evidence_seed
from kavi.gates.runner import GateConfig, prepare_generated_inputs, run_gates
from kavi.proposals.model import Proposal
from tests.factories import REPO, warm_mypy_cache_root

ANSWERS = REPO / "kavi" / "examples" / "answers"
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
    config = GateConfig(wall_s=60, mypy_cache_root=warm_mypy_cache_root(tmp_path / "mypy"),
                        evidence=EvidenceConfig(max_cases=10))
    out = run_gates(tmp_path / "gates", word_count, files, config)
    assert out.passed, [(r.gate, r.reason) for r in out.results if not r.ok]
    differential = next(r for r in out.results if r.gate == "differential")
    assert differential.details["generated"] > 0
    assert len(calls) == 1  # the verification generated nothing itself


def test_a_fresh_mypy_cache_is_warmed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from kavi.gates import tools
    from kavi.sandbox.runner import Limits

    limits = Limits(wall_s=120)
    cache_root = tmp_path / "cache"
    assert not tools.mypy_cache_warm(cache_root)
    runs: list[str] = []
    real = tools.mypy_gate

    def counted(work: Path, rel: str, root: Path, lim: Limits) -> object:
        runs.append(rel)
        return real(work, rel, root, lim)

    monkeypatch.setattr(tools, "mypy_gate", counted)
    # Builds starting together: one warm-up runs mypy, the others find the cache warm.
    threads = [threading.Thread(target=tools.warm_mypy_cache, args=(tmp_path / f"w{i}", cache_root, limits))
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert runs == [tools.WARM_SKILL_REL]
    assert tools.mypy_cache_warm(cache_root)
    assert not tools.warm_mypy_cache(tmp_path / "again", cache_root, limits)
    # The marker sits beside the cache, not in the folder a gate's mypy writes to.
    cache = tools.mypy_cache_dir(cache_root)
    assert not any(p.name.endswith("kavi-warmed") for p in cache.rglob("*"))
    # A skill checked against the warmed cache passes as against a cold one.
    work = tmp_path / "skill"
    (work / "skills").mkdir(parents=True)
    (work / "skills" / "word_count.py").write_bytes(SKILL)
    assert real(work, "skills/word_count.py", cache_root, limits).ok


def test_unclaimed_preparations_make_room(word_count: Proposal) -> None:
    # Builds that never reached their verification (a failed answer) leave theirs: the oldest give way.
    for cases in range(1, runner._PREPARED_MAX + 3):
        assert prepare_generated_inputs(word_count, cases)
    with runner._prepared_lock:
        kept = [key[1] for key in runner._prepared]
    assert kept == list(range(3, runner._PREPARED_MAX + 3))
