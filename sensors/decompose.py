"""The decomposition sensor: asks for a decomposition when a proposal cannot be verified, requests the forge runs of
the children a decomposition intook, and advances a decomposition when its children are settled (all trusted, or
one failed past its budget). Run keys make every request once-only."""

import hashlib

import dagster as dg

from kavi.decompose.answer import DecomposeLimits
from kavi.decompose.forge import child_failure, trigger_for
from kavi.decompose.records import WAITING, DecompositionRecords
from kavi.forge.ceremony import scale_of
from kavi.forge.context import ForgeContext
from kavi.lifecycle import ProposalStatus
from kavi_assets.assets.decompose import decompose_job
from kavi_assets.assets.jobs import forge_job
from kavi_assets.assets.partitions import PROPOSALS
from resources.home import SkillsHomeResource


def _no_llm() -> object:
    raise RuntimeError("the decomposition sensor never calls a model")


def decomposition_requests(ctx: ForgeContext, limits: DecomposeLimits) -> list[dg.RunRequest]:
    """What the sensor would request now (pure: reads the ledger, starts nothing)."""
    requests: list[dg.RunRequest] = []
    dec = DecompositionRecords(ctx.records)
    for row in ctx.records.list_status():
        name = str(row["name"])
        # Cheap first: only an escalated proposal, or one whose recorded complexity is over the threshold, is looked
        # at closely (the listing is one row per proposal; the closer look reads its notes and decompositions).
        complex_enough = scale_of(float(row["complexity"] or 0.0)) > limits.above
        if row["status"] == ProposalStatus.ESCALATED.value or (complex_enough and row["status"] in (
                ProposalStatus.PROPOSED.value, ProposalStatus.FAILED.value)):
            why = trigger_for(ctx, name, limits)
            if why is not None:
                spec = ctx.records.require_proposal(name).spec_sha256
                requests.append(dg.RunRequest(job_name=decompose_job.name, partition_key=name,
                                              run_key=f"decompose:{name}:{spec[:16]}",
                                              tags={"kavi/trigger": "decompose", "kavi/reason": why[:60]}))
    for d in dec.all_active():
        if d.status != WAITING:
            continue
        states = {c: ctx.records.require_proposal(c) for c in d.children}
        for child, crow in states.items():
            if crow.status is ProposalStatus.PROPOSED and not ctx.records.builds(child):
                requests.append(dg.RunRequest(job_name=forge_job.name, partition_key=child,
                                              run_key=f"child:{child}:{crow.spec_sha256[:16]}",
                                              tags={"kavi/trigger": "decompose-child", "kavi/parent": d.parent_name}))
        settled = all(r.status is ProposalStatus.TRUSTED for r in states.values()) or any(
            child_failure(ctx, c, limits) is not None for c in d.children)
        if settled:
            mark = hashlib.sha256("|".join(f"{c}:{r.status.value}:{r.trusted_version}" for c, r in states.items())
                                  .encode()).hexdigest()[:16]
            requests.append(dg.RunRequest(job_name=decompose_job.name, partition_key=d.parent_name,
                                          run_key=f"advance:{d.decomposition_id}:{mark}",
                                          tags={"kavi/trigger": "decompose-advance"}))
    return requests


@dg.sensor(
    name="decompose_unverifiable",
    jobs=[decompose_job, forge_job],
    minimum_interval_seconds=10,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Decomposes proposals the forge cannot verify (REPEATED_FAILURE, AMBIGUOUS, or complexity above "
    "KAVI_DECOMPOSE_ABOVE), forges the children, and advances the decomposition when they are settled.",
)
def decompose_unverifiable(context: dg.SensorEvaluationContext, home: SkillsHomeResource
                           ) -> dg.SensorResult | dg.SkipReason:
    ctx = ForgeContext.open(home.home(), _no_llm)  # type: ignore[arg-type]
    requests = decomposition_requests(ctx, DecomposeLimits.from_env())
    if not requests:
        return dg.SkipReason("nothing to decompose or advance")
    keys = sorted({str(r.partition_key) for r in requests if r.partition_key})
    missing = [k for k in keys if not context.instance.has_dynamic_partition(PROPOSALS, k)]
    adds = [dg.AddDynamicPartitionsRequest(PROPOSALS, missing)] if missing else []
    return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=adds)
