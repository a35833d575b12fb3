"""The sandbox and gate runner settings as a Dagster resource."""

import os
from pathlib import Path

import dagster as dg
from pydantic import Field

from kavi_assets.forge.context import ForgeSettings
from kavi_assets.skills.base import SideEffectClass


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
            research_advice=self.research_advice or os.environ.get("KAVI_RESEARCH_ADVICE", "") == "1",
            advice_timeout_s=self.advice_timeout_s,
        )
