"""Assembles the Kavi Forge code location: assets, checks, jobs, sensors and resources. No work at import."""

import functools

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


def _definitions(bound: frozenset[str]) -> dg.Definitions:
    """The code location, each resource setting in `bound` (the variables set) bound to its variable with dg.EnvVar,
    so the UI shows it and the run reads it when it starts. An unset one stays unset (dg.EnvVar of an unset variable
    fails the run): the resource takes the setting's default from the settings when a run starts."""

    def env(name: str) -> dg.EnvVar | None:
        return dg.EnvVar(name) if name in bound else None

    def env_int(name: str) -> int | None:
        return dg.EnvVar.int(name) if name in bound else None

    home = SkillsHomeResource(root=env("KAVI_HOME"))
    llm = LLMResource(
        base_url=env("KAVI_LLM_BASE_URL"),
        api_key=env("KAVI_LLM_API_KEY") or env("OPENAI_API_KEY"),
        max_prompt_chars=env_int("KAVI_LLM_MAX_PROMPT_CHARS"),
        cassette_dir=env("KAVI_RECORDED_CASSETTES"),
    )
    gates = GateRunnerResource(
        evidence_max_cases=env_int("KAVI_EVIDENCE_MAX_CASES"),
        gate_slots=env_int("KAVI_GATE_SLOTS"),
    )
    return dg.Definitions(
        assets=dg.load_assets_from_modules([forge, registry, learning, audit, executions, decompose, reverify]),
        jobs=[forge_job, promote_job, registry_job, learn_job, audit_job, ingest_job, decompose_job, reverify_job],
        schedules=[audit_schedule, ingest_schedule],
        sensors=[proposal_intake, retry_failed_attempts, learn_model_outcomes, promote_approved, refresh_registry,
                 stale_run_sweep, decompose_unverifiable, judging_fingerprint_moved],
        resources={
            "home": home,
            "llm": llm,
            "gates": gates,
            "attempt_lock": AttemptLockResource(home=home),
        },
        executor=dg.in_process_executor,
    )


# The variables the resources' settings are bound to when set.
BOUND_VARIABLES = frozenset({"KAVI_HOME", "KAVI_LLM_BASE_URL", "KAVI_LLM_API_KEY", "OPENAI_API_KEY",
                             "KAVI_LLM_MAX_PROMPT_CHARS", "KAVI_RECORDED_CASSETTES", "KAVI_EVIDENCE_MAX_CASES",
                             "KAVI_GATE_SLOTS"})


def _set_now() -> frozenset[str]:
    return configured_variables() & BOUND_VARIABLES


# The location as Dagster loads it: bound to the variables set when the code location loads (a reload loads again).
_LOADED = _set_now()
defs = _definitions(_LOADED)


@functools.lru_cache(maxsize=16)
def _definitions_for(bound: frozenset[str]) -> dg.Definitions:
    return defs if bound == _LOADED else _definitions(bound)


def current_definitions() -> dg.Definitions:
    """The location bound to the variables set now: what a run this process executes itself uses (a long-lived
    process, a test run above all, may have another environment than the one this module was imported in)."""
    return _definitions_for(_set_now())


def forge_job_definition() -> dg.JobDefinition:
    """The forge job, resolved: what a launcher that reconstructs a job from its module loads (`dg.reconstructable`)."""
    return current_definitions().resolve_job_def("forge")


def promote_job_definition() -> dg.JobDefinition:
    """The promote job, resolved (as forge_job_definition)."""
    return current_definitions().resolve_job_def("promote")
