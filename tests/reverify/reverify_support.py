"""Helpers for issue 17's tests: trusted versions built from the shipped word_count answer and judged by the real
gates (kavi.forge.verify), approved by a person and promoted."""

import copy
import json
from pathlib import Path
from typing import Any

from kavi.forge.attempt import BUILD_OK
from kavi.forge.context import ForgeContext, ForgeSettings
from kavi.forge.promote import approve, promote
from kavi.forge.verify import VerifyOutcome, verify
from kavi.home import KaviHome
from kavi.proposals.model import parse_proposal

ANSWERS = Path(__file__).resolve().parents[2] / "kavi" / "examples" / "answers"
WORD_COUNT = (ANSWERS / "word_count" / "1" / "skill.py").read_text()
WORD_COUNT_TESTS = (ANSWERS / "word_count" / "1" / "test.py").read_text()
SPEC: dict[str, Any] = {
    "name": "word_count",
    "description": "Count the words, lines and characters of a text.",
    "inputs": [{"name": "text", "type": "str"}],
    "outputs": [{"name": "words", "type": "int"}, {"name": "lines", "type": "int"},
                {"name": "characters", "type": "int"}],
    "side_effect_class": "READ_ONLY",
    "examples": [{"input": {"text": "a b"}, "expected": {"words": 2, "lines": 1}}],
    "holdout_examples": [{"input": {"text": "one two"}, "expected": {"words": 2, "lines": 1}}],
}
# A user policy that tightens a rule word_count relies on: the `re` module is refused.
REFUSE_RE = """modules:
  re:
    verdict: refused
    reason: regular expressions are refused on this machine (a test's tightening)
    instead: split the text with str.split
"""


def no_model() -> Any:
    raise AssertionError("no model call expected here")


def ctx_for(home: KaviHome, **settings: Any) -> ForgeContext:
    return ForgeContext.open(home, no_model, ForgeSettings(evidence_levels=(), **settings))


def built(home: KaviHome, source: str = WORD_COUNT, tests: str = WORD_COUNT_TESTS, *, model: str = "builder-m",
          spec: dict[str, Any] | None = None, prompt_tokens: int = 1000, completion_tokens: int = 400,
          latency_ms: float = 1500.0) -> str:
    """Record the proposal and a BUILT attempt holding `source` and `tests`, as a model's answer would."""
    spec = copy.deepcopy(spec or SPEC)
    ctx = ctx_for(home)
    ctx.records.register_proposal(parse_proposal(spec), source_path=None, complexity=0.1)
    name = spec["name"]
    attempt = len(ctx.records.builds(name)) + 1
    packet = ctx.store.put(json.dumps({"kind": "BUILD_PACKET", "attempt": attempt}).encode(), "build_packet")
    skill = ctx.store.put(source.encode(), "skill_source")
    test = ctx.store.put(tests.encode(), "skill_tests")
    build_id = f"{name}-a{attempt}-reverify"
    ctx.records.start_build(name, run_id=None, model=model, endpoint="e", packet=packet, build_id=build_id,
                            attempt=attempt, parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build(build_id, status=BUILD_OK, failure_kind=None, skill_sha256=skill.sha256,
                             test_sha256=test.sha256, prompt_tokens=prompt_tokens,
                             completion_tokens=completion_tokens, latency_ms=latency_ms)
    return build_id


def verified(home: KaviHome, **kw: Any) -> VerifyOutcome:
    build_id = built(home, **kw)
    return verify(ctx_for(home), "word_count", None, build_id)


def trust(home: KaviHome, approver: str = "ada", **kw: Any) -> VerifyOutcome:
    """A real verification (every gate runs), a person's approval, the promotion."""
    outcome = verified(home, **kw)
    assert outcome.passed, [r.to_dict() for r in outcome.results if not r.ok]
    ctx = ctx_for(home)
    approve(ctx, "word_count", approver)
    assert promote(ctx, "word_count").promoted
    return outcome


def trust_recorded(home: KaviHome, approver: str = "ada", coach: bool = False, **kw: Any) -> str:
    """A trusted version whose gate verdicts are recorded without running the gates (fast): for the tests of what a
    promotion records, not of the gates. With `coach`, a coach gate's verdict is among them."""
    from kavi.lifecycle import ProposalStatus, Verdict
    from kavi.verdicts import DETERMINISTIC_GATES, GATE_COACH, GateResult

    build_id = built(home, **kw)
    ctx = ctx_for(home)
    # Without `coach`, the coach gate is recorded as the pipeline records it at ceremony low: omitted, with the reason.
    review = (GateResult(GATE_COACH, Verdict.PASSED, "the coach found the tests adequate", 0.1,
                         details={"coach_model": "coach-m"}) if coach
              else GateResult(GATE_COACH, Verdict.OMITTED, "ceremony low: deterministic gates only", 0.0,
                              details={"ceremony": "low"}))
    ctx.records.record_gate_results(build_id, [
        *(GateResult(g, Verdict.PASSED, "ok", 0.1, details={}) for g in DETERMINISTIC_GATES), review])
    ctx.records.finish_build(build_id, status="VERIFIED", failure_kind=None)
    ctx.records.set_status("word_count", ProposalStatus.VERIFIED, build_id=build_id, reason="every gate passed")
    approve(ctx, "word_count", approver)
    assert promote(ctx, "word_count").promoted
    return build_id
