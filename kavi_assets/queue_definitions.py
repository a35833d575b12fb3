"""The forge's code location as a batch's own daemon loads it: the assets, jobs and resources, and of the sensors
only the one that queues requested batches (sensors/batch.py). The retry sensor and the others are left out: they
would add attempts the command did not ask for, at times that depend on when the daemon stops. The batch's workspace
names this location `kavi_assets.definitions`, the full location's name, so the runs read as the forge's in the UI
and a daemon someone already runs on the same DAGSTER_HOME can launch them too."""

import dagster as dg

from kavi_assets import definitions as _location
from sensors.batch import batch_requests

defs = dg.Definitions(
    assets=_location.defs.assets,
    jobs=_location.defs.jobs,
    sensors=[batch_requests],
    resources=_location.defs.resources,
    executor=dg.in_process_executor,
)
