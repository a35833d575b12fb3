"""The sandbox and gate runner settings as a Dagster resource."""

import os
from pathlib import Path

import dagster as dg
from pydantic import Field

from kavi.config import EVIDENCE_BUDGET_S, EVIDENCE_MAX_CASES, env_float, env_int
from kavi.forge.context import ForgeSettings
from kavi.skills.base import SideEffectClass


def parse_costs(raw: str) -> dict[str, float]:
    """`model=cost,model=cost` into a mapping; a malformed entry is an error that names it."""
    costs: dict[str, float] = {}
    for entry in (e.strip() for e in raw.split(",")):
        if not entry:
            continue
        model, sep, value = entry.rpartition("=")
        try:
            cost = float(value)
        except ValueError:
            cost = -1.0
        if not sep or not model.strip() or cost < 0:
            raise ValueError(f"KAVI_LLM_COSTS entry {entry!r} must read model=cost with a cost of 0 or more")
        costs[model.strip()] = cost
    return costs


class GateRunnerResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    wall_s: float = Field(default=90.0, description="wall-clock limit for each code-running gate")
    coverage_min: float = Field(default=80.0, description="minimum line coverage of the skill file, percent")
    policy_path: str = Field(default="", description="a policy YAML that tightens the default policy")
    auto_approve: list[str] = Field(
        default_factory=list,
        description="side-effect classes promoted without a person's approval (off unless listed)",
    )
    prior_weight: float = Field(default=2.0, description="weight of the routing prior, in pseudo-attempts")
    research_advice: bool = Field(default=False, description="ask the model for advice on research notes")
    advice_timeout_s: float = Field(default=20.0, description="timeout of the advice call, enforced")
    retry_backoff_s: float = Field(default=2.0, description="base of the exponential wait between attempts")
    retry_backoff_max_s: float = Field(default=300.0, description="longest wait between attempts")
    infra_backoff_s: float = Field(
        default=60.0,
        description="base of the exponential wait before retrying an INFRASTRUCTURE failure (a missing tool, a full "
                    "disk): the forge's environment needs time or a person, not another model attempt",
    )
    model_costs: dict[str, float] = Field(
        default_factory=dict,
        description="cost per build attempt of each model (any unit); routing then maximises successes per cost",
    )

    evidence_levels: list[str] = Field(
        default_factory=list,
        description="ceremony levels (low, standard, strict) at which generated inputs and an independent "
                    "implementation check a build; empty: KAVI_EVIDENCE_LEVELS, else every level",
    )
    evidence_max_cases: int = Field(default=0, description="generated inputs per build; 0: KAVI_EVIDENCE_MAX_CASES "
                                                           "or 40")
    gate_slots: int | None = Field(
        default=None, ge=0,
        description="how many builds of this machine run their gates at once, so runs waiting for a model overlap "
                    "with runs verifying; unset: KAVI_GATE_SLOTS, else the CPUs; 0: no limit")
    evidence_time_budget_s: float = Field(default=0.0, description="time for the generated inputs of one build; 0: "
                                                                   "KAVI_EVIDENCE_BUDGET_S or 15")

    def _evidence_levels(self) -> tuple[str, ...]:
        from kavi.forge.ceremony import levels_from_env, parse_levels

        # Read when a run starts: KAVI_EVIDENCE_LEVELS=standard,strict (or all, or none)
        levels = parse_levels(",".join(self.evidence_levels)) if self.evidence_levels else levels_from_env(os.environ)
        return tuple(level.value for level in levels)

    def _model_costs(self) -> dict[str, float]:
        if self.model_costs:
            return dict(self.model_costs)
        # Read when a run starts: KAVI_LLM_COSTS=model-a=0.02,model-b=0.005
        return parse_costs(os.environ.get("KAVI_LLM_COSTS", ""))

    def _auto_approve(self) -> list[str]:
        if self.auto_approve:
            return list(self.auto_approve)
        # Read when a run starts, never at import: KAVI_AUTO_APPROVE=READ_ONLY[,FILE_WRITE]
        raw = os.environ.get("KAVI_AUTO_APPROVE", "")
        return [c.strip().upper() for c in raw.split(",") if c.strip()]

    def settings(self) -> ForgeSettings:
        return ForgeSettings(
            gate_wall_s=self.wall_s,
            coverage_min=self.coverage_min,
            policy_path=Path(self.policy_path) if self.policy_path else None,
            auto_approve=tuple(SideEffectClass(c) for c in self._auto_approve()),
            prior_weight=self.prior_weight,
            model_costs=self._model_costs(),
            research_advice=self.research_advice or os.environ.get("KAVI_RESEARCH_ADVICE", "") == "1",
            advice_timeout_s=self.advice_timeout_s,
            evidence_levels=self._evidence_levels(),
            evidence_max_cases=self.evidence_max_cases or env_int(os.environ, "KAVI_EVIDENCE_MAX_CASES",
                                                                  EVIDENCE_MAX_CASES, minimum=0),
            gate_slots=self.gate_slots,
            evidence_time_budget_s=self.evidence_time_budget_s or env_float(os.environ, "KAVI_EVIDENCE_BUDGET_S",
                                                                            EVIDENCE_BUDGET_S),
        )
