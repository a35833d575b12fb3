"""The stale-run sweep: runs whose owning process is gone are marked failed, so they stop counting against
`max_concurrent_runs`; attempts they left open are closed as ABANDONED and their sandboxes removed.

The CLI executes runs in its own process and tags them with its pid, host and process start
(kavi.process_owner); forge runs launched elsewhere are tagged by the process that executes them. Dagster's
run monitoring cannot see such a process die (the default run launcher has no worker health check), so this
sweep does: the CLI runs it before it launches a run, `kavi doctor --fix` runs it, and so does this sensor under
the daemon. A run owned by another host is never judged from this one."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from kavi.forge.recovery import OpenAttempt, abandoned_attempts, close_abandoned, leaked_sandboxes
from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.process_owner import ProcessOwner
from resources.home import SkillsHomeResource

LIVE_STATUSES = [dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.STARTING,
                 dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
SWEPT_STATUSES = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]


@dataclass(frozen=True)
class StaleRun:
    run_id: str
    job_name: str
    partition: str | None
    status: str
    owner: str

    def describe(self) -> str:
        return (f"run {self.run_id[:8]} ({self.job_name}" + (f" {self.partition}" if self.partition else "")
                + f", {self.status}, {self.owner} is gone)")


@dataclass
class SweepReport:
    stale_runs: list[StaleRun] = field(default_factory=list)
    abandoned: list[OpenAttempt] = field(default_factory=list)
    leaked_sandboxes: list[Path] = field(default_factory=list)
    fixed: bool = False

    @property
    def clean(self) -> bool:
        return not (self.stale_runs or self.abandoned or self.leaked_sandboxes)

    def summary(self) -> str:
        if self.clean:
            return "no stale runs, abandoned attempts or leaked sandboxes"
        verb = "fixed" if self.fixed else "found"
        parts = []
        if self.stale_runs:
            parts.append(f"{len(self.stale_runs)} stale run(s) marked failed" if self.fixed
                         else f"{len(self.stale_runs)} stale run(s)")
        if self.abandoned:
            parts.append(f"{len(self.abandoned)} attempt(s) closed as ABANDONED" if self.fixed
                         else f"{len(self.abandoned)} abandoned attempt(s)")
        if self.leaked_sandboxes:
            parts.append(f"{len(self.leaked_sandboxes)} leaked sandbox(es) removed" if self.fixed
                         else f"{len(self.leaked_sandboxes)} leaked sandbox(es)")
        return f"{verb}: " + ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fixed": self.fixed,
            "stale_runs": [r.__dict__ for r in self.stale_runs],
            "abandoned_attempts": [a.__dict__ for a in self.abandoned],
            "leaked_sandboxes": [str(p) for p in self.leaked_sandboxes],
        }


def stale_runs(instance: dg.DagsterInstance) -> list[StaleRun]:
    """Runs STARTING or STARTED whose owning process (from their tags) is gone from this host."""
    out = []
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=SWEPT_STATUSES)):
        run = record.dagster_run
        owner = ProcessOwner.from_tags(run.tags)
        if owner is None or owner.alive() is not False:
            continue
        out.append(StaleRun(run.run_id, run.job_name, run.tags.get("dagster/partition"), run.status.value,
                            owner.describe()))
    return out


def fail_stale_runs(instance: dg.DagsterInstance, runs: list[StaleRun]) -> list[StaleRun]:
    failed = []
    for stale in runs:
        run = instance.get_run_by_id(stale.run_id)
        if run is None or run.status not in SWEPT_STATUSES:
            continue  # it finished meanwhile
        instance.report_run_failed(
            run, f"Marked failed by the kavi sweep: the process that executed it ({stale.owner}) is gone "
                 "(killed or crashed); its attempt, if any, is closed as ABANDONED.")
        failed.append(stale)
    return failed


def _run_is_live(instance: dg.DagsterInstance) -> Any:
    def live(run_id: str) -> bool:
        run = instance.get_run_by_id(run_id)
        if run is None or run.status not in LIVE_STATUSES:
            return False
        owner = ProcessOwner.from_tags(run.tags)
        return owner is None or owner.alive() is not False
    return live


def sweep(home: KaviHome, instance: dg.DagsterInstance | None, *, fix: bool,
          records: ForgeRecords | None = None, sandboxes: bool = True) -> SweepReport:
    """Find (and with `fix`, repair) stale runs, abandoned attempts and leaked sandboxes, in that order."""
    report = SweepReport(fixed=fix)
    if instance is not None:
        report.stale_runs = stale_runs(instance)
        if fix:
            report.stale_runs = fail_stale_runs(instance, report.stale_runs)
    from kavi.ledger.lake import ledger_present

    if not ledger_present(home.ledger_path):
        return report
    records = records or ForgeRecords(Ledger(home.ledger_path))
    live = _run_is_live(instance) if instance is not None else None
    candidates = abandoned_attempts(home, records, live)
    if fix:
        why = "no live run (its process is gone)"
        report.abandoned = [a for a in candidates if close_abandoned(home, records, a, why)]
    else:
        report.abandoned = candidates
    if sandboxes:
        leaked = leaked_sandboxes(home, records)
        if fix:
            from kavi.forge.recovery import remove_sandbox

            leaked = [p for p in leaked if remove_sandbox(home, p.name)]
        report.leaked_sandboxes = leaked
    return report


@dg.sensor(
    name="stale_run_sweep",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Marks runs whose owning process is gone as failed (they would hold max_concurrent_runs slots "
                "forever), closes the attempts they left open as ABANDONED and removes their sandboxes.",
)
def stale_run_sweep(context: dg.SensorEvaluationContext, home: SkillsHomeResource) -> dg.SkipReason:
    report = sweep(home.home(), context.instance, fix=True)
    for r in report.stale_runs:
        context.log.warning(f"marked failed: {r.describe()}")
    for a in report.abandoned:
        context.log.warning(f"closed as ABANDONED: {a.describe()}")
    return dg.SkipReason(report.summary())
