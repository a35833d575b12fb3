"""Launch the `reverify` job, once per fingerprint, when trusted versions were verified under another judging
fingerprint (tools, policy, gate configuration)."""

import dagster as dg

from kavi.forge.context import ForgeContext
from kavi.forge.reverify import fingerprint_for, stale_versions
from kavi_assets.assets.reverify import REVERIFY_JOB
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource


def _no_model() -> object:
    raise RuntimeError("the sensor makes no model call")


@dg.sensor(
    name="judging_fingerprint_moved",
    job_name=REVERIFY_JOB,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Launches the reverify job when trusted versions were verified under another judging fingerprint.",
)
def judging_fingerprint_moved(context: dg.SensorEvaluationContext, home: SkillsHomeResource,
                 gates: GateRunnerResource) -> dg.RunRequest | dg.SkipReason:
    h = home.home()
    if not h.ledger_path.exists():
        return dg.SkipReason("no ledger yet")
    ctx = ForgeContext.open(h, _no_model, gates.settings())  # type: ignore[arg-type]
    fp = fingerprint_for(ctx)
    stale = stale_versions(ctx, fp)
    if not stale:
        return dg.SkipReason(f"every trusted version was verified under fingerprint {fp.digest[:12]}")
    # One run per fingerprint: the run key makes a second request for the same fingerprint a no-op.
    return dg.RunRequest(run_key=f"reverify:{fp.digest}",
                         tags={"kavi/trigger": "judging-fingerprint-moved", "kavi/fingerprint": fp.digest[:16],
                               "kavi/stale": str(len(stale))})
