"""The execution log as an asset: the runtime's JSONL audit records, ingested into the ledger."""

import dagster as dg

from kavi.ledger.store import Ledger
from kavi.runtime.ingest import ingest_execution_log
from resources.home import SkillsHomeResource

EXECUTION_LOG_KEY = dg.AssetKey(["forge", "execution_log"])


@dg.asset(
    key=EXECUTION_LOG_KEY,
    group_name="runtime",
    kinds={"duckdb"},
    description="Ingests the fsync'd execution log into the ledger, incrementally and idempotently.",
)
def execution_log(home: SkillsHomeResource) -> dg.MaterializeResult:  # type: ignore[type-arg]
    h = home.home()
    out = ingest_execution_log(Ledger(h.ledger_path), h.executions_log)
    return dg.MaterializeResult(
        metadata={
            "inserted": dg.MetadataValue.int(out.inserted),
            "lines_read": dg.MetadataValue.int(out.read_lines),
            "malformed_lines": dg.MetadataValue.int(out.malformed),
            "executions_in_ledger": dg.MetadataValue.int(out.total),
            "offset": dg.MetadataValue.int(out.offset),
            "log": dg.MetadataValue.path(str(h.executions_log)),
        }
    )


ingest_job = dg.define_asset_job(
    "ingest_executions", selection=dg.AssetSelection.assets(EXECUTION_LOG_KEY), executor_def=dg.in_process_executor,
)
ingest_schedule = dg.ScheduleDefinition(
    name="ingest_execution_log", job=ingest_job, cron_schedule="*/5 * * * *",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Ingests new execution records every five minutes.",
)
