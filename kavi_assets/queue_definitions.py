"""The forge's code location without its sensors and schedules: the origin of the runs `kavi forge --all` and
`kavi demo --concurrency N` queue, so that their run workers load the forge and nothing that would act on its own
(the retry sensor would add attempts the command did not ask for, at times that depend on when the daemon stops).
The runs carry `kavi_assets.definitions`, the full location's name, so a daemon someone already runs on the same
DAGSTER_HOME can launch the same queued runs."""

import dagster as dg

from kavi_assets import definitions as _location

defs = dg.Definitions(
    assets=_location.defs.assets,
    jobs=_location.defs.jobs,
    resources=_location.defs.resources,
    executor=dg.in_process_executor,
)
