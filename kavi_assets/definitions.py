"""Assembles the Kavi Forge code location: assets, checks, jobs, sensors and resources. No work at import."""

import dagster as dg

from kavi.settings import configured_variables
from kavi_assets.assets import audit, decompose, executions, forge, learning, registry, reverify
from kavi_assets.assets.audit import audit_job, audit_schedule
from kavi_assets.assets.decompose import decompose_job
from kavi_assets.assets.executions import ingest_job, ingest_schedule
from kavi_assets.assets.jobs import forge_job, learn_job, promote_job, registry_job
from kavi_assets.assets.reverify import reverify_job
from resources.attempt_lock import AttemptLockResource
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource
from sensors.decompose import decompose_unverifiable
from sensors.intake import proposal_intake
from sensors.learning import learn_model_outcomes
from sensors.promotion import promote_approved
from sensors.registry import refresh_registry
from sensors.retry import retry_failed_attempts
from sensors.reverify import judging_fingerprint_moved
from sensors.sweep import stale_run_sweep


def _bound(name: str) -> dg.EnvVar | None:
    """A str setting bound to its variable when it is set (dg.EnvVar of an unset variable fails the run); unset,
    the resource takes the setting's default from the settings when a run starts."""
    return dg.EnvVar(name) if name in _SET else None


def _bound_int(name: str) -> int | None:
    return dg.EnvVar.int(name) if name in _SET else None


# Which KAVI_* variables are set when the code location loads (kavi.settings reads the environment, not this module).
_SET = configured_variables()
_home = SkillsHomeResource(root=_bound("KAVI_HOME"))
_llm = LLMResource(
    base_url=_bound("KAVI_LLM_BASE_URL"),
    api_key=_bound("KAVI_LLM_API_KEY") or _bound("OPENAI_API_KEY"),
    max_prompt_chars=_bound_int("KAVI_LLM_MAX_PROMPT_CHARS"),
    cassette_dir=_bound("KAVI_RECORDED_CASSETTES"),
)
_gates = GateRunnerResource(
    evidence_max_cases=_bound_int("KAVI_EVIDENCE_MAX_CASES"),
    gate_slots=_bound_int("KAVI_GATE_SLOTS"),
)

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([forge, registry, learning, audit, executions, decompose, reverify]),
    jobs=[forge_job, promote_job, registry_job, learn_job, audit_job, ingest_job, decompose_job, reverify_job],
    schedules=[audit_schedule, ingest_schedule],
    sensors=[proposal_intake, retry_failed_attempts, learn_model_outcomes, promote_approved, refresh_registry,
             stale_run_sweep, decompose_unverifiable, judging_fingerprint_moved],
    resources={
        "home": _home,
        "llm": _llm,
        "gates": _gates,
        "attempt_lock": AttemptLockResource(home=_home),
    },
    executor=dg.in_process_executor,
)


def forge_job_definition() -> dg.JobDefinition:
    """The forge job, resolved: what a launcher that reconstructs a job from its module loads (`dg.reconstructable`)."""
    return defs.resolve_job_def("forge")


def promote_job_definition() -> dg.JobDefinition:
    """The promote job, resolved (as forge_job_definition)."""
    return defs.resolve_job_def("promote")
