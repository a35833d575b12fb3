"""Batches asked for by a command: `kavi forge --all` and `kavi demo --concurrency N` write a request into the
home's `batches/` folder, and this sensor turns it into one queued forge run per proposal, tagged with the batch.

The queue (dagster.yaml's run coordinator) then runs them within its limits. A request stays until the command that
wrote it has seen all its runs; each run has a run key, so a request read twice never queues a run twice. A request
that cannot be read is skipped with its reason in the tick's log, and costs no other request its runs."""

import dagster as dg

from kavi.forge.batch import BATCH_TAG, BatchRequestError, read_batch_request
from kavi.settings import read_setting
from kavi_assets.assets.jobs import forge_job
from kavi_assets.assets.partitions import PROPOSALS, proposals_partitions
from resources.home import SkillsHomeResource


@dg.sensor(job=forge_job, minimum_interval_seconds=1, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Queues the forge runs of batches requested by `kavi forge --all` and `kavi demo "
                       "--concurrency N` (request files in the home's batches/ folder).")
def batch_requests(context: dg.SensorEvaluationContext, home: SkillsHomeResource) -> dg.SensorResult:
    folder = home.home().batches_dir
    # The run's console logger at the CLI's level ($KAVI_DAGSTER_LOG): the command prints its own summary, and the
    # run's events stay in its record for the UI.
    run_config = {"loggers": {"console": {"config": {"log_level": read_setting("dagster_log")}}}}
    runs: list[dg.RunRequest] = []
    names: list[str] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            request = read_batch_request(path)
        except BatchRequestError as err:
            context.log.warning(f"batch request skipped: {err}")
            continue
        for item in request.items:
            names.append(item.name)
            runs.append(dg.RunRequest(partition_key=item.name, run_key=request.run_key(item), run_config=run_config,
                                      tags={**item.tags, BATCH_TAG: request.batch_id}))
    known = set(context.instance.get_dynamic_partitions(PROPOSALS)) if names else set()
    missing = list(dict.fromkeys(n for n in names if n not in known))
    return dg.SensorResult(
        run_requests=runs,
        dynamic_partitions_requests=[proposals_partitions.build_add_request(missing)] if missing else [])
