"""The static gates on the skill's source: the capability policy scan and the AST invariants."""

import time
from pathlib import Path

from kavi.lifecycle import Verdict
from kavi.proposals.model import Proposal
from kavi.verdicts import GATE_INVARIANTS, GATE_POLICY, GateResult


def _syntax_failure(gate: str, err: SyntaxError, t0: float) -> GateResult:
    msg = f"syntax error at line {err.lineno}: {err.msg}"
    return GateResult(gate, Verdict.FAILED, msg, time.monotonic() - t0, [msg])


def policy_gate(source: str, proposal: Proposal, policy_path: Path | None) -> GateResult:
    from kavi.policy.policy import load_policy, policy_digest
    from kavi.policy.scanner import scan_source

    t0 = time.monotonic()
    policy = load_policy(policy_path)
    try:
        violations = scan_source(source, proposal.side_effect_class, declared_secrets=proposal.required_secrets,
                                 policy=policy)
    except SyntaxError as err:
        return _syntax_failure(GATE_POLICY, err, t0)
    details = {"violations": [v.to_dict() for v in violations], "policy_digest": policy_digest(policy),
               "side_effect_class": proposal.side_effect_class.value}
    duration = time.monotonic() - t0
    if violations:
        rules = sorted({v.rule_id for v in violations})
        return GateResult(GATE_POLICY, Verdict.FAILED, f"{len(violations)} violation(s): {', '.join(rules)}",
                          duration, [v.render() for v in violations], details)
    return GateResult(GATE_POLICY, Verdict.PASSED,
                      f"no capability beyond {proposal.side_effect_class.value}", duration, [], details)


def invariants_gate(source: str, proposal: Proposal) -> GateResult:
    from kavi.policy.invariants import check_invariants

    t0 = time.monotonic()
    try:
        violations = check_invariants(source, expected_class=proposal.side_effect_class, expected_name=proposal.name)
    except SyntaxError as err:
        return _syntax_failure(GATE_INVARIANTS, err, t0)
    duration = time.monotonic() - t0
    if violations:
        return GateResult(GATE_INVARIANTS, Verdict.FAILED, f"{len(violations)} invariant(s) broken", duration,
                          [v.render() for v in violations], {"violations": [v.to_dict() for v in violations]})
    return GateResult(GATE_INVARIANTS, Verdict.PASSED, "one BaseSkill subclass with the declared contract", duration)
