"""The decomposition asset (RIVA): per proposal partition, what the forge did about a proposal it could
not verify — asked the model for children and a composition, waits for the children, failed on a child, or verified
the composition on the parent's own examples and holdouts. Its metadata shows parent → children → composition."""

import json
from typing import Any

import dagster as dg

from kavi.decompose.forge import AdvanceOutcome, DecomposeOutcome, step, tree, tree_markdown
from kavi_assets.assets.forge import RESEARCH_KEY, forge_context, status_observation
from kavi_assets.assets.partitions import PROPOSALS, proposals_partitions
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource

DECOMPOSITION_KEY = dg.AssetKey(["forge", "decomposition"])
DECOMPOSE_JOB = "decompose"


@dg.asset(
    key=DECOMPOSITION_KEY,
    deps=[RESEARCH_KEY],
    partitions_def=proposals_partitions,
    group_name="decompose",
    kinds={"python", "openai"},
    description="If you can't verify it, decompose it: the child proposals the model proposed for a proposal the "
    "forge could not verify, their states, and the composition (a chain of the children) that computes the parent.",
)
def decomposition(
    context: dg.AssetExecutionContext, home: SkillsHomeResource, llm: LLMResource, gates: GateRunnerResource
) -> Any:
    ctx = forge_context(home, llm, gates)
    name = context.partition_key
    out = step(ctx, name, context.run.run_id)
    meta: dict[str, Any] = {}
    if isinstance(out, DecomposeOutcome):
        meta["step"] = "decomposed" if out.accepted else "refused"
        meta["reason"] = out.reason
        if out.accepted:
            new = [c for c in out.children if not context.instance.has_dynamic_partition(PROPOSALS, c)]
            if new:
                context.instance.add_dynamic_partitions(PROPOSALS, new)
            context.log.info(f"{name}: {out.reason}; each child is forged as a proposal of its own")
        else:
            context.log.warning(f"{name}: the decomposition was refused: {out.reason}")
    elif isinstance(out, AdvanceOutcome):
        meta["step"] = f"advanced: {out.status}"
        meta["reason"] = out.reason
        if out.build_id:
            meta["build_id"] = out.build_id
    else:
        meta["step"] = "nothing to do"
    doc = tree(ctx, name)
    d = doc.get("decomposition") or {}
    meta["tree"] = dg.MetadataValue.md(tree_markdown(doc))
    meta["state"] = str(doc["state"])
    meta["decomposition_status"] = str(d.get("status") or "none")
    meta["children"] = dg.MetadataValue.json([c["name"] for c in doc.get("children", [])])
    if d.get("composition"):
        meta["composition"] = dg.MetadataValue.md(f"```json\n{json.dumps(d['composition'], indent=2)}\n```")
    yield dg.MaterializeResult(metadata=meta)
    yield status_observation(ctx, name)


decompose_job = dg.define_asset_job(
    DECOMPOSE_JOB,
    selection=dg.AssetSelection.assets(DECOMPOSITION_KEY),
    description="Decompose a proposal the forge could not verify, or advance its decomposition (fail it on a failed "
    "child, verify the composition once every child is trusted).",
    executor_def=dg.in_process_executor,
)
