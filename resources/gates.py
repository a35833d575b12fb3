"""The sandbox and gate runner settings as a Dagster resource."""

from pathlib import Path

import dagster as dg
from pydantic import Field

from kavi.forge.ceremony import levels_of, parse_levels
from kavi.forge.context import ForgeSettings
from kavi.settings import KaviSettings
from kavi.skills.base import SideEffectClass


class GateRunnerResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    wall_s: float = Field(default=90.0, description="wall-clock limit for each code-running gate")
    coverage_min: float = Field(default=80.0, description="minimum line coverage of the skill file, percent")
    policy_path: str = Field(default="", description="a policy YAML that tightens the default policy")
    auto_approve: list[str] = Field(
        default_factory=list,
        description="side-effect classes promoted without a person's approval (off unless listed here or in "
                    "KAVI_AUTO_APPROVE)",
    )
    prior_weight: float = Field(default=2.0, description="weight of the routing prior, in pseudo-attempts")
    research_advice: bool | None = Field(default=None, description="ask the model for advice on research notes; "
                                                                   "unset: KAVI_RESEARCH_ADVICE, else off")
    advice_timeout_s: float = Field(default=20.0, description="timeout of the advice call, enforced")
    retry_backoff_s: float = Field(default=2.0, description="base of the exponential wait between attempts")
    retry_backoff_max_s: float = Field(default=300.0, description="longest wait between attempts")
    infra_backoff_s: float = Field(
        default=60.0,
        description="base of the exponential wait before retrying an INFRASTRUCTURE failure (a missing tool, a full "
                    "disk): the forge's environment needs time or a person, not another model attempt",
    )
    endpoint_backoff_s: float = Field(
        default=30.0,
        description="base of the exponential wait before retrying an ENDPOINT_UNAVAILABLE attempt (the model endpoint "
                    "failed: 5xx, 429, a dropped connection, a timeout); the wait doubles with each failure in a row",
    )
    endpoint_outage_attempts: int = Field(
        default=6, ge=1,
        description="ENDPOINT_UNAVAILABLE attempts in a row before the outage escalates to a person (with the default "
                    "backoffs, about half an hour of outage)",
    )
    model_costs: dict[str, float] | None = Field(
        default=None,
        description="cost per build attempt of each model (any unit); routing then maximises successes per cost; "
                    "unset: KAVI_LLM_COSTS",
    )

    evidence_levels: list[str] | None = Field(
        default=None,
        description="ceremony levels (low, standard, strict) at which generated inputs and an independent "
                    "implementation check a build; unset: KAVI_EVIDENCE_LEVELS, else every level",
    )
    evidence_max_cases: int | None = Field(default=None, ge=0, description="generated inputs per build; unset: "
                                                                          "KAVI_EVIDENCE_MAX_CASES, else 40")
    gate_slots: int | None = Field(
        default=None, ge=0,
        description="how many builds of this machine run their gates at once, so runs waiting for a model overlap "
                    "with runs verifying; unset: KAVI_GATE_SLOTS, else the CPUs; 0: no limit")
    evidence_time_budget_s: float | None = Field(default=None, gt=0, description="time for the generated inputs of "
                                                                                "one build; unset: "
                                                                                "KAVI_EVIDENCE_BUDGET_S, else 15")

    resource_deadline_s: float | None = Field(
        default=None, gt=0, description="the resource gate's deadline for one call at the input bound; unset: "
                                        "KAVI_RESOURCE_DEADLINE_S, else 10")
    resource_budget_s: float | None = Field(
        default=None, ge=0, description="CPU seconds the resource gate's probes may spend per build (0: the gate is "
                                        "omitted); unset: KAVI_RESOURCE_BUDGET_S, else 3")

    adequacy_max_mutants: int | None = Field(
        default=None, ge=0, description="mutants of a build tried by the mutation analysis of the evidence (0: off); "
                                        "unset: KAVI_ADEQUACY_MAX_MUTANTS, else 40")
    adequacy_max_questions: int | None = Field(
        default=None, ge=0, description="questions the evidence leaves open kept per attempt for a person; unset: "
                                        "KAVI_ADEQUACY_MAX_QUESTIONS, else 3")
    adequacy_budget_s: float | None = Field(
        default=None, gt=0, description="sandbox seconds the mutation analysis may spend per build; unset: "
                                        "KAVI_ADEQUACY_BUDGET_S, else 1.5")

    @classmethod
    def from_settings(cls, settings: KaviSettings) -> "GateRunnerResource":
        """The resource with the settings' values as its configuration (shown in the Dagster UI)."""
        return cls(auto_approve=list(settings.auto_approve), research_advice=settings.research_advice,
                   model_costs=dict(settings.llm_costs), evidence_levels=list(settings.evidence_levels),
                   evidence_max_cases=settings.evidence_max_cases, gate_slots=settings.gate_slots,
                   evidence_time_budget_s=settings.evidence_budget_s,
                   resource_deadline_s=settings.resource_deadline_s, resource_budget_s=settings.resource_budget_s,
                   adequacy_max_mutants=settings.adequacy_max_mutants,
                   adequacy_max_questions=settings.adequacy_max_questions,
                   adequacy_budget_s=settings.adequacy_budget_s)

    def settings(self, settings: KaviSettings | None = None) -> ForgeSettings:
        """The forge's settings: this resource's fields, and for a field left unset, the KAVI_* settings (`settings`,
        else read now, when a run starts, never at import)."""
        s = settings if settings is not None else KaviSettings()
        levels = parse_levels(",".join(self.evidence_levels)) if self.evidence_levels is not None else levels_of(s)
        return ForgeSettings(
            gate_wall_s=self.wall_s,
            coverage_min=self.coverage_min,
            policy_path=Path(self.policy_path) if self.policy_path else None,
            auto_approve=tuple(SideEffectClass(c.strip().upper()) for c in (self.auto_approve or s.auto_approve)),
            prior_weight=self.prior_weight,
            model_costs=dict(self.model_costs if self.model_costs is not None else s.llm_costs),
            research_advice=self.research_advice if self.research_advice is not None else s.research_advice,
            advice_timeout_s=self.advice_timeout_s,
            evidence_levels=tuple(level.value for level in levels) if self.evidence_levels != [] else (),  # []: none
            evidence_max_cases=(self.evidence_max_cases if self.evidence_max_cases is not None
                                else s.evidence_max_cases),
            gate_slots=self.gate_slots if self.gate_slots is not None else s.gate_slots,
            evidence_time_budget_s=(self.evidence_time_budget_s if self.evidence_time_budget_s is not None
                                    else s.evidence_budget_s),
            resource_deadline_s=(self.resource_deadline_s if self.resource_deadline_s is not None
                                 else s.resource_deadline_s),
            resource_budget_s=self.resource_budget_s if self.resource_budget_s is not None else s.resource_budget_s,
            endpoint_outage_attempts=self.endpoint_outage_attempts,
            adequacy_max_mutants=(self.adequacy_max_mutants if self.adequacy_max_mutants is not None
                                  else s.adequacy_max_mutants),
            adequacy_max_questions=(self.adequacy_max_questions if self.adequacy_max_questions is not None
                                    else s.adequacy_max_questions),
            adequacy_budget_s=self.adequacy_budget_s if self.adequacy_budget_s is not None else s.adequacy_budget_s,
        )


