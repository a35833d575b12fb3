"""Everything a forge step needs, assembled once per run from configuration (no Dagster types)."""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kavi.gates.adequacy import AdequacyConfig
from kavi.home import KaviHome
from kavi.ledger.artifacts import ArtifactStore
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.llm.client import LLMClient
from kavi.settings import (
    ADEQUACY_BUDGET_S,
    ADEQUACY_MAX_MUTANTS,
    ADEQUACY_MAX_QUESTIONS,
    EVIDENCE_BUDGET_S,
    EVIDENCE_MAX_CASES,
    RESOURCE_BUDGET_S,
    RESOURCE_DEADLINE_S,
)
from kavi.skills.base import SideEffectClass


@dataclass(frozen=True)
class ForgeSettings:
    gate_wall_s: float = 90.0
    coverage_min: float = 80.0
    policy_path: Path | None = None
    # Auto-approval is off unless the user names the low-risk classes it may cover.
    auto_approve: tuple[SideEffectClass, ...] = ()
    prior_weight: float = 2.0
    model_costs: dict[str, float] = field(default_factory=dict)
    # Optional model advice on research notes: bounded prompt, enforced timeout; off unless asked for.
    research_advice: bool = False
    advice_timeout_s: float = 20.0
    # The ceremony levels (low, standard, strict) at which the generated-input evidence runs after the deterministic
    # gates: oracle-free checks and the comparison with an independent implementation by a second model.
    evidence_levels: tuple[str, ...] = ("low", "standard", "strict")
    evidence_max_cases: int = EVIDENCE_MAX_CASES
    evidence_time_budget_s: float = EVIDENCE_BUDGET_S
    # The resource gate: the deadline a call at the input bound must meet, and the CPU its probes may spend (0: off).
    resource_deadline_s: float = RESOURCE_DEADLINE_S
    resource_budget_s: float = RESOURCE_BUDGET_S
    # The mutation analysis of the evidence (with the evidence, at its ceremony levels): mutants per attempt (0: off),
    # questions kept for a person, and the sandbox seconds it may spend.
    adequacy_max_mutants: int = ADEQUACY_MAX_MUTANTS
    adequacy_max_questions: int = ADEQUACY_MAX_QUESTIONS
    adequacy_budget_s: float = ADEQUACY_BUDGET_S
    # How many builds of this machine run their gates at once (kavi/sandbox/slots.py); None: KAVI_GATE_SLOTS,
    # else the CPUs; 0: no limit.
    gate_slots: int | None = None
    # An endpoint outage escalates once this many attempts in a row failed as ENDPOINT_UNAVAILABLE (each retried by
    # the retry sensor after its own backoff, none of them spending the model's budget).
    endpoint_outage_attempts: int = 6


def adequacy_config(settings: ForgeSettings, runs: bool, why: str) -> AdequacyConfig:
    """The mutation analysis's bounds for one verification: on with the evidence, unless no mutant may be tried."""
    if runs and settings.adequacy_max_mutants <= 0:
        runs, why = False, "mutation analysis is off (KAVI_ADEQUACY_MAX_MUTANTS=0)"
    return AdequacyConfig(enabled=runs, skipped_reason="" if runs else why,
                          max_mutants=settings.adequacy_max_mutants, max_questions=settings.adequacy_max_questions,
                          budget_s=settings.adequacy_budget_s)


@dataclass
class ForgeContext:
    home: KaviHome
    records: ForgeRecords
    store: ArtifactStore
    llm_factory: Callable[[], LLMClient]
    settings: ForgeSettings = field(default_factory=ForgeSettings)

    @classmethod
    def open(
        cls,
        home: KaviHome,
        llm_factory: Callable[[], LLMClient],
        settings: ForgeSettings | None = None,
        lock_timeout_s: float = 60.0,
    ) -> "ForgeContext":
        home.ensure()
        home.keep_reserve()  # room to close an attempt when the disk fills up (given back at the first ENOSPC)
        ledger = Ledger(home.ledger_path, lock_timeout_s=lock_timeout_s)
        return cls(home, ForgeRecords(ledger), ArtifactStore(home.artifacts_dir), llm_factory,
                   settings or ForgeSettings())
