"""The registry sensor: when the ledger's trusted skills moved, materialize `forge/skill_registry` once.

The forge's promotion step does not rewrite the registry file (that would make every promotion pay for the size of
the registry); this sensor regenerates it after promotions and demotions, one run for however many landed between
two ticks.
"""

import json
import time

import dagster as dg

from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.promotion.registry import REBUILD, registry_file_mark, registry_state
from kavi_assets.assets.jobs import registry_job
from resources.home import SkillsHomeResource

# A request for the same ledger state is repeated only after this long (its run may have failed).
RETRY_SAME_MARK_S = 300.0


@dg.sensor(
    name="refresh_registry",
    job=registry_job,
    minimum_interval_seconds=10,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Materializes forge/skill_registry when promotions or demotions changed the trusted skills.",
)
def refresh_registry(context: dg.SensorEvaluationContext, home: SkillsHomeResource) -> dg.RunRequest | dg.SkipReason:
    h = home.home()
    records = ForgeRecords(Ledger(h.ledger_path))
    seq, count = records.registry_mark()
    if registry_file_mark(h.registry_path) == (seq, count):
        return dg.SkipReason(f"the registry file is current ({count} trusted, last promotion #{seq})")
    state = registry_state(records, h.registry_path)  # only when the marks differ: not at every tick
    if not state.refreshable:
        return dg.SkipReason(f"the registry file disagrees with the ledger and is left for a person: "
                             f"{'; '.join(state.problems[:2])} (kavi verify; {REBUILD})")
    try:
        last = json.loads(context.cursor) if context.cursor else {}
    except ValueError:
        last = {}
    now = time.time()
    if last.get("mark") == [seq, count] and now - float(last.get("at", 0.0)) < RETRY_SAME_MARK_S:
        return dg.SkipReason(f"a registry run for this ledger state (promotion #{seq}) was requested already")
    context.update_cursor(json.dumps({"mark": [seq, count], "at": now}))
    return dg.RunRequest(run_key=f"registry:{seq}:{count}:{int(now)}",
                         tags={"kavi/trigger": "registry-refresh", "kavi/trusted": str(count)})
