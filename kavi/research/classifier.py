"""Classify a failed attempt deterministically and extract the facts the next packet carries."""

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kavi.infrastructure import infrastructure_cause
from kavi.lifecycle import FailureKind
from kavi.verdicts import (
    GATE_ACCEPTANCE,
    GATE_ADEQUACY,
    GATE_COACH,
    GATE_COVERAGE,
    GATE_DIFFERENTIAL,
    GATE_INVARIANTS,
    GATE_MYPY,
    GATE_POLICY,
    GATE_PYTEST,
    GATE_RESOURCE,
    GATE_RUFF,
    GateResult,
)

MAX_MESSAGES_PER_GATE = 12
MAX_MESSAGE_CHARS = 400

# When several gates fail, the note is filed under the most serious: security first, then in gate order.
_GATE_KIND_ORDER: tuple[tuple[str, FailureKind], ...] = (
    (GATE_POLICY, FailureKind.VERIFY_POLICY),
    (GATE_INVARIANTS, FailureKind.VERIFY_INVARIANT),
    (GATE_RUFF, FailureKind.VERIFY_LINT),
    (GATE_MYPY, FailureKind.VERIFY_TYPE),
    (GATE_PYTEST, FailureKind.VERIFY_TEST),
    (GATE_COVERAGE, FailureKind.VERIFY_COVERAGE),
    (GATE_ACCEPTANCE, FailureKind.VERIFY_ACCEPTANCE),
    # Generated inputs the skill got wrong: a behavioural failure, like a failed example.
    (GATE_DIFFERENTIAL, FailureKind.VERIFY_ACCEPTANCE),
    # A question of the mutation analysis the independent implementation settled against the skill: the same.
    (GATE_ADEQUACY, FailureKind.VERIFY_ACCEPTANCE),
    # Right answers, but a time that grows faster than the input (or passes the deadline at the input bound).
    (GATE_RESOURCE, FailureKind.VERIFY_RESOURCE),
    # The coach runs only after every gate above passed; its request for changes is the builder's outcome.
    (GATE_COACH, FailureKind.COACH_CHANGES_REQUESTED),
)

# kavi.llm.client.ENDPOINT_KINDS by value (this module stays clear of the SDK's import): the endpoint's faults.
_ENDPOINT_ERRORS = frozenset({"UNAVAILABLE", "TIMEOUT", "BAD_RESPONSE"})
_INFRA_KEY = re.compile(r"\d+")  # numbers (sizes, pids) vary between tries of the same infrastructure fault
_RUFF_CODE = re.compile(r"\b([A-Z]{1,3}\d{3,4})\b")
_MYPY_CODE = re.compile(r"\[([a-z-]+)\]\s*$")

# What a research note and the next packet say when the coach model failed (its endpoint, or an answer outside the
# schema) after every other gate passed: the reviewer's failure, not the builder's.
COACH_NOT_JUDGED = "the coach could not review; the build was not judged (the coach's failure, not the builder's)"


@dataclass(frozen=True)
class AttemptFailure:
    """Why an attempt failed before or during verification."""

    stage: str  # "llm", "answer", "allowlist", "verify", "infrastructure", "internal"
    message: str
    llm_error_kind: str | None = None
    llm_terminal: bool = False
    gate_results: Sequence[GateResult] = ()
    violations: Sequence[str] = ()
    llm_status: str | None = None  # what the endpoint last did, in a few words ("HTTP 503", "answer cut off")
    endpoint: str | None = None  # the endpoint's label (no credentials)


@dataclass(frozen=True)
class Classification:
    kind: FailureKind
    facts: dict[str, Any]
    fingerprint: str
    key_facts: list[str] = field(default_factory=list)


def _trim(msgs: Sequence[str]) -> list[str]:
    out = [m if len(m) <= MAX_MESSAGE_CHARS else m[: MAX_MESSAGE_CHARS - 1] + "…" for m in msgs]
    if len(out) > MAX_MESSAGES_PER_GATE:
        out = [*out[:MAX_MESSAGES_PER_GATE], f"… {len(out) - MAX_MESSAGES_PER_GATE} more"]
    return out


def _key_facts(gate: str, result: GateResult) -> list[str]:
    """Stable, content-light facts for fingerprinting: codes and test names, not line numbers."""
    keys: list[str] = []
    for m in result.messages:
        if gate == GATE_RUFF:
            keys += [f"ruff:{c}" for c in _RUFF_CODE.findall(m)[:1]]
        elif gate == GATE_MYPY:
            hit = _MYPY_CODE.search(m)
            if hit:
                keys.append(f"mypy:{hit.group(1)}")
        elif gate in (GATE_POLICY, GATE_INVARIANTS):
            keys.append(f"{gate}:{m.split(' ', 1)[0]}")
        elif gate == GATE_PYTEST:
            keys.append(f"test:{m.split(' ', 1)[0][:120]}")
    if gate == GATE_DIFFERENTIAL:
        # The kinds of counterexample, not the generated values (which change with every fix).
        keys += [f"differential:{c.get('kind')}" for c in result.details.get("counterexamples") or []
                 if isinstance(c, dict)]
    if gate == GATE_ADEQUACY:
        keys += ["adequacy:counterexample"] if result.details.get("counterexamples") else []
    if gate == GATE_RESOURCE:
        # The fields and shapes that grew too fast, not their times (which change with every run).
        keys += [f"resource:{s.get('shape')}" for s in result.details.get("shapes") or []
                 if isinstance(s, dict) and s.get("problem")]
    if not keys:
        keys.append(f"{gate}:{result.reason[:80]}")
    return sorted(set(keys))


def _fingerprint(kind: FailureKind, keys: Sequence[str]) -> str:
    payload = json.dumps({"kind": kind.value, "keys": sorted(keys)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def classify(failure: AttemptFailure) -> Classification:
    facts: dict[str, Any]
    keys: list[str]
    if failure.stage == "infrastructure" or (failure.stage == "llm" and failure.llm_error_kind == "PROMPT_TOO_LONG"):
        # Not the model's doing: a prompt over the bound never reached it; a full disk or a file-size limit
        # stopped the forge's own writes.
        kind = FailureKind.INFRASTRUCTURE
        cause = "prompt_too_long" if failure.stage == "llm" else "forge_write"
        facts = {"stage": failure.stage, "error": failure.message, "infrastructure": {failure.stage: failure.message},
                 "retryable": cause != "prompt_too_long"}
        keys = [f"infrastructure:{cause}"]
        return Classification(kind, facts, _fingerprint(kind, keys), keys)
    if failure.stage == "llm" and failure.llm_error_kind == "NOT_CONFIGURED":
        kind = FailureKind.LLM_NOT_CONFIGURED
        keys = ["llm:NOT_CONFIGURED"]
        facts = {"stage": "llm", "error": failure.message, "llm_error_kind": failure.llm_error_kind,
                 "configuration": failure.message}
        return Classification(kind, facts, _fingerprint(kind, keys), keys)
    if failure.stage == "llm" and failure.llm_error_kind in _ENDPOINT_ERRORS and not failure.llm_terminal:
        # The endpoint's outage, not the model's answer: the key is the kind of fault, so a sustained outage is one
        # fingerprint whatever the status of each try.
        kind = FailureKind.ENDPOINT_UNAVAILABLE
        facts = {"stage": "llm", "error": failure.message, "llm_error_kind": failure.llm_error_kind,
                 "endpoint": failure.endpoint, "endpoint_status": failure.llm_status, "retryable": True}
        keys = ["endpoint:unavailable"]
        return Classification(kind, facts, _fingerprint(kind, keys), keys)
    if failure.stage == "llm":
        kind = FailureKind.TIMEOUT if failure.llm_error_kind == "TIMEOUT" else FailureKind.LLM_UNAVAILABLE
        facts = {
            "stage": "llm",
            "error": failure.message,
            "llm_error_kind": failure.llm_error_kind,
            "terminal": failure.llm_terminal,
        }
        keys = [f"llm:{failure.llm_error_kind}"]
        return Classification(kind, facts, _fingerprint(kind, keys), keys)
    if failure.stage == "answer":
        kind = FailureKind.LLM_BAD_OUTPUT
        keys = ["answer:unparseable"]
        return Classification(kind, {"stage": "answer", "error": failure.message}, _fingerprint(kind, keys), keys)
    if failure.stage == "allowlist":
        kind = FailureKind.GATE_VIOLATION
        keys = sorted(f"allowlist:{v.split(' ', 1)[0]}" for v in failure.violations)
        facts = {"stage": "allowlist", "violations": list(failure.violations)}
        return Classification(kind, facts, _fingerprint(kind, keys), keys)
    if failure.stage == "verify":
        failed = {r.gate: r for r in failure.gate_results if not r.ok}
        infra = {g: c for g, r in failed.items() if (c := infrastructure_cause(r)) is not None}
        # A gate the forge could not run says nothing about the code; the model's failures are the other gates'.
        model_failed = {g for g in failed if g not in infra}
        if infra and not model_failed - {GATE_COVERAGE}:
            kind = FailureKind.INFRASTRUCTURE
            keys = sorted(f"infrastructure:{g}:{_INFRA_KEY.sub('#', c)[:80]}" for g, c in infra.items())
            facts = {"stage": "verify", "failed_gates": sorted(failed), "infrastructure": infra,
                     "retryable": True,
                     "gates": {g: {"reason": r.reason, "messages": _trim(r.messages)} for g, r in failed.items()}}
            if set(failed) == {GATE_COACH}:
                # Every gate that judges the code passed; only the reviewer failed: the build was not judged.
                facts["not_judged"] = COACH_NOT_JUDGED
            return Classification(kind, facts, _fingerprint(kind, keys), keys)
        kind = FailureKind.UNKNOWN
        for gate, gate_kind in _GATE_KIND_ORDER:
            if gate in model_failed:
                kind = gate_kind
                break
        pytest_result = failed.get(GATE_PYTEST)
        if pytest_result is not None:
            if pytest_result.details.get("zero_tests") or "zero tests" in pytest_result.reason.lower():
                if kind in (FailureKind.VERIFY_TEST, FailureKind.VERIFY_COVERAGE, FailureKind.VERIFY_ACCEPTANCE):
                    kind = FailureKind.ZERO_TESTS
            elif pytest_result.details.get("timed_out") and kind is FailureKind.VERIFY_TEST:
                kind = FailureKind.TIMEOUT
        gates: dict[str, Any] = {}
        keys = []
        for gate, result in failed.items():
            entry: dict[str, Any] = {"reason": result.reason, "messages": _trim(result.messages)}
            if gate == GATE_ACCEPTANCE:
                # Holdout specifics stay out of the facts the builder will see; only the count goes on.
                entry["holdout_failed"] = int(result.details.get("holdout_failed", 0))
            if gate in (GATE_POLICY, GATE_INVARIANTS):
                entry["violations"] = result.details.get("violations", [])
            if gate == GATE_COACH:
                # The reviewer's findings (it never saw a holdout): the next packet carries them to the builder.
                entry["findings"] = list(result.details.get("findings") or [])
            if gate in (GATE_DIFFERENTIAL, GATE_ADEQUACY):
                # Generated inputs and probes only (never a holdout): the builder may see them, with both answers.
                entry["counterexamples"] = list(result.details.get("counterexamples") or [])
            if gate == GATE_RESOURCE:
                # Generated inputs only: the field, the input shape, the sizes and times, the fitted growth.
                entry["shapes"] = [s for s in result.details.get("shapes") or [] if isinstance(s, dict)
                                   and s.get("problem")]
            gates[gate] = entry
            keys += _key_facts(gate, result)
        facts = {"stage": "verify", "failed_gates": sorted(failed), "gates": gates}
        if infra:
            facts["infrastructure"] = infra
        return Classification(kind, facts, _fingerprint(kind, keys), sorted(set(keys)))
    kind = FailureKind.BUILD_ERROR if failure.stage == "build" else FailureKind.UNKNOWN
    keys = [f"{failure.stage}:{failure.message[:80]}"]
    return Classification(kind, {"stage": failure.stage, "error": failure.message}, _fingerprint(kind, keys), keys)
