"""Research: deterministic classification of failures and the escalation triggers."""

from kavi.lifecycle import FailureKind, Verdict
from kavi.research.classifier import AttemptFailure, classify
from kavi.research.escalation import EscalationInput, Trigger, changed_ratio, triggers_for
from kavi.skills.base import SideEffectClass
from kavi.verdicts import GateResult


def _gate(gate: str, ok: bool, msgs: list[str], reason: str = "", **details: object) -> GateResult:
    return GateResult(gate, Verdict.PASSED if ok else Verdict.FAILED, reason or gate, 0.1, msgs, dict(details))


def test_ruff_failure_is_verify_lint_with_messages() -> None:
    results = [
        _gate("ruff", False, ["skills/x.py:1:8 F401 `os` imported but unused"]),
        _gate("mypy", True, []),
        _gate("pytest", True, []),
    ]
    c = classify(AttemptFailure("verify", "gates failed", gate_results=results))
    assert c.kind is FailureKind.VERIFY_LINT
    assert "F401" in c.facts["gates"]["ruff"]["messages"][0]
    assert c.key_facts == ["ruff:F401"]


def test_policy_outranks_lint_and_zero_tests_detected() -> None:
    both = [_gate("ruff", False, ["a.py:1:1 E501 long"]), _gate("policy", False, ["POL-PROCESS line 3: x"])]
    assert classify(AttemptFailure("verify", "", gate_results=both)).kind is FailureKind.VERIFY_POLICY
    zero = [_gate("pytest", False, [], reason="zero tests collected", zero_tests=True)]
    assert classify(AttemptFailure("verify", "", gate_results=zero)).kind is FailureKind.ZERO_TESTS


def test_holdout_specifics_stay_out_of_facts() -> None:
    acc = _gate("acceptance", False, ["example[0] ok"], holdout_failed=2, holdout=[{"input": {"secret": 1}}])
    c = classify(AttemptFailure("verify", "", gate_results=[acc]))
    assert c.kind is FailureKind.VERIFY_ACCEPTANCE
    assert c.facts["gates"]["acceptance"]["holdout_failed"] == 2
    assert "secret" not in str(c.facts)


def test_fingerprint_stable_across_line_numbers() -> None:
    a = classify(AttemptFailure("verify", "", gate_results=[_gate("ruff", False, ["x.py:1:8 F401 os"])]))
    b = classify(AttemptFailure("verify", "", gate_results=[_gate("ruff", False, ["x.py:9:8 F401 sys"])]))
    assert a.fingerprint == b.fingerprint


def test_stage_classification() -> None:
    assert classify(AttemptFailure("answer", "not JSON")).kind is FailureKind.LLM_BAD_OUTPUT
    assert classify(AttemptFailure("allowlist", "x", violations=["'../a' climbs"])).kind is FailureKind.GATE_VIOLATION
    # An endpoint that is down is the endpoint's fault; a refused key stays LLM_UNAVAILABLE.
    down = classify(AttemptFailure("llm", "down", llm_error_kind="UNAVAILABLE"))
    assert down.kind is FailureKind.ENDPOINT_UNAVAILABLE
    assert classify(AttemptFailure("llm", "no", llm_error_kind="AUTH", llm_terminal=True)).kind is \
        FailureKind.LLM_UNAVAILABLE


def _inp(**kw: object) -> EscalationInput:
    base: dict[str, object] = dict(kind=FailureKind.VERIFY_LINT, fingerprint="f", previous_fingerprints=[],
                                   attempt=1, budget=4, declared_class=SideEffectClass.READ_ONLY)
    base.update(kw)
    return EscalationInput(**base)  # type: ignore[arg-type]


def test_triggers() -> None:
    assert triggers_for(_inp()) == []
    assert Trigger.REPEATED_FAILURE in triggers_for(_inp(previous_fingerprints=["f", "f"], attempt=3, budget=9))
    assert Trigger.REPEATED_FAILURE not in triggers_for(_inp(previous_fingerprints=["g", "f"], attempt=3))
    assert Trigger.SECURITY_CLASS in triggers_for(_inp(kind=FailureKind.VERIFY_POLICY))
    assert Trigger.AMBIGUOUS in triggers_for(_inp(kind=FailureKind.UNKNOWN))
    assert Trigger.BUDGET_EXHAUSTED in triggers_for(_inp(attempt=4, budget=4))
    assert Trigger.TERMINAL_LLM_ERROR in triggers_for(_inp(kind=FailureKind.LLM_UNAVAILABLE, llm_terminal=True))
    assert Trigger.PERMISSION_WIDENING in triggers_for(_inp(advice="give it NETWORK access to fetch data"))
    assert Trigger.PERMISSION_WIDENING not in triggers_for(_inp(advice="fix the READ_ONLY parsing"))
    big = "\n".join(f"line {i}" for i in range(10))
    other = "\n".join(f"other {i}" for i in range(10))
    assert changed_ratio(big, big) == 0.0
    assert Trigger.LARGE_DIFF in triggers_for(_inp(packet_text=other, previous_packet_text=big))
