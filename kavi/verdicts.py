"""The gates' vocabulary: gate names, a policy finding (Violation) and a gate's verdict on a build (GateResult)."""

from dataclasses import dataclass, field
from typing import Any

from kavi.lifecycle import Verdict

GATE_RUFF = "ruff"
GATE_MYPY = "mypy"
GATE_PYTEST = "pytest"
GATE_COVERAGE = "coverage"
GATE_POLICY = "policy"
GATE_INVARIANTS = "invariants"
GATE_ACCEPTANCE = "acceptance"
GATE_DIFFERENTIAL = "differential"
GATE_RESOURCE = "resource"
# The mutation analysis of the evidence: fails only when the independent implementation sides with a mutant.
GATE_ADEQUACY = "adequacy"
# A decomposed parent's composition: every child it chains is a served trusted version (its own gates passed).
GATE_CHILDREN = "children"
# The coach: a second model's review after the deterministic gates passed; not run by run_gates.
GATE_COACH = "coach"

# The gates run_gates runs (tools and the forge's own checks: the model cannot argue with them).
DETERMINISTIC_GATES: tuple[str, ...] = (
    GATE_RUFF,
    GATE_MYPY,
    GATE_PYTEST,
    GATE_COVERAGE,
    GATE_POLICY,
    GATE_INVARIANTS,
    GATE_ACCEPTANCE,
    GATE_DIFFERENTIAL,
    GATE_RESOURCE,
    GATE_ADEQUACY,
)
ALL_GATES: tuple[str, ...] = (*DETERMINISTIC_GATES, GATE_COACH)
# The gates whose failure names inputs with the candidate's and an independent implementation's answers.
COUNTEREXAMPLE_GATES: tuple[str, ...] = (GATE_DIFFERENTIAL, GATE_ADEQUACY)


@dataclass(frozen=True)
class Violation:
    """One policy or invariant finding: rule id, where, the offending source, and why."""

    rule_id: str
    line: int
    col: int
    source: str
    why: str
    capability: str = ""

    def render(self) -> str:
        return f"{self.rule_id} line {self.line}: {self.why} -- `{self.source.strip()}`"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "line": self.line,
            "col": self.col,
            "source": self.source,
            "why": self.why,
            "capability": self.capability,
        }


@dataclass(frozen=True)
class GateResult:
    """One gate's verdict on one build. `omitted` must carry a reason or it counts as failed."""

    gate: str
    verdict: Verdict
    reason: str
    duration_s: float
    messages: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def effective_verdict(self) -> Verdict:
        if self.verdict is Verdict.OMITTED and not self.reason.strip():
            return Verdict.FAILED
        return self.verdict

    @property
    def ok(self) -> bool:
        return self.effective_verdict is not Verdict.FAILED

    def to_dict(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "verdict": self.verdict.value,
            "effective_verdict": self.effective_verdict.value,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 4),
            "messages": list(self.messages),
            "details": self.details,
        }
