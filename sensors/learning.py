"""The learning sensor: new model outcomes in the ledger materialize `model_posteriors`."""

import dagster as dg

from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi_assets.assets.jobs import learn_job
from resources.home import SkillsHomeResource


@dg.sensor(
    name="learn_model_outcomes",
    job=learn_job,
    minimum_interval_seconds=10,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Materializes forge/model_posteriors when new attempt outcomes land in the ledger.",
)
def learn_model_outcomes(
    context: dg.SensorEvaluationContext, home: SkillsHomeResource
) -> dg.RunRequest | dg.SkipReason:
    count, latest = ForgeRecords(Ledger(home.home().ledger_path)).latest_outcome_at()
    marker = f"{count}:{latest.isoformat() if latest else ''}"
    if count == 0:
        return dg.SkipReason("no model outcomes recorded yet")
    if context.cursor == marker:
        return dg.SkipReason(f"no new outcomes since the last update ({count} in all)")
    context.update_cursor(marker)
    return dg.RunRequest(run_key=f"learn:{marker}", tags={"kavi/trigger": "learning", "kavi/outcomes": str(count)})
