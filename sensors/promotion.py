"""The promotion sensor: an approval recorded in the ledger promotes its verified build."""

import dagster as dg

from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi_assets.assets.jobs import promote_job
from resources.home import SkillsHomeResource


@dg.sensor(
    name="promote_approved",
    job=promote_job,
    minimum_interval_seconds=5,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests forge/registry_entry for proposals whose latest verified build was approved.",
)
def promote_approved(context: dg.SensorEvaluationContext, home: SkillsHomeResource) -> dg.SensorResult | dg.SkipReason:
    pending = ForgeRecords(Ledger(home.home().ledger_path)).pending_promotions()
    if not pending:
        return dg.SkipReason("no approved builds waiting for promotion")
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(run_key=f"promote:{name}:{build_id}", partition_key=name,
                          tags={"kavi/trigger": "approval", "kavi/build": build_id})
            for name, build_id in pending
        ]
    )
