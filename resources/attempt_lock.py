"""The per-proposal attempt lock as a run-scoped resource: a forge run holds its partition's lock from its first
step to its end, whoever launched it (the CLI, a sensor under the daemon, `dagster asset materialize`).

The forge jobs run in process, so the resource is set up once per run and torn down when the run ends, failed
steps included; a killed run worker releases the lock with its process. The resource also records which process
executes the run (pid, host, process start) as run tags when the launcher did not, so the stale-run sweep can
tell a run whose worker died, and tags a run started without a `kavi/trigger` (the UI, `dagster asset materialize`)
with `kavi/trigger: dagster`."""

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
from pydantic import Field

from kavi.forge.locks import attempt_lock
from kavi.process_owner import PID_TAG, ProcessOwner
from kavi.settings import KaviSettings
from resources.home import SkillsHomeResource

PARTITION_TAG = "dagster/partition"
TRIGGER_TAG = "kavi/trigger"
OUTSIDE_TRIGGER = "dagster"  # the trigger of a forge run started without one


class AttemptLockResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """`wait_s`: how long a run waits for another attempt of its proposal; unset: KAVI_FORGE_WAIT_S, else 600 s."""

    home: SkillsHomeResource
    wait_s: float | None = Field(default=None, ge=0, description="seconds a run waits for another attempt of its "
                                                                 "proposal; unset: KAVI_FORGE_WAIT_S, else 600")

    @contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator["AttemptLockResource"]:
        run = context.run
        name = run.tags.get(PARTITION_TAG) if run is not None else None
        if run is None or not name:
            yield self
            return
        if context.instance is not None:
            missing = {} if PID_TAG in run.tags else ProcessOwner.current().tags()
            if TRIGGER_TAG not in run.tags:
                # Started outside kavi (the UI's Materialize, `dagster asset materialize`, which takes no tags): the
                # run carries the trigger tag every forge run has, naming where it came from.
                missing[TRIGGER_TAG] = OUTSIDE_TRIGGER
            if missing:
                context.instance.add_run_tags(run.run_id, missing)

        def waiting(busy: Exception) -> None:
            if context.log is not None:
                context.log.info(f"waiting: {busy}")

        with attempt_lock(self.home.home(), name, run_id=run.run_id,
                          wait_s=self.wait_s if self.wait_s is not None else KaviSettings().forge_wait_s,
                          on_wait=waiting):
            yield self
