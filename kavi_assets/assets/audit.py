"""The scheduled trust audit: promotion hash chain, registry projection and trusted file hashes."""

import dagster as dg

from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.promotion.audit import audit
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource

TRUST_AUDIT_KEY = dg.AssetKey(["forge", "trust_audit"])
CHECK_TRUST = "trust_intact"


@dg.asset(
    key=TRUST_AUDIT_KEY,
    group_name="registry",
    kinds={"duckdb", "python"},
    description="Re-verifies the trusted registry: hash chain, registry projection, file hashes, current policy.",
    check_specs=[dg.AssetCheckSpec(CHECK_TRUST, asset=TRUST_AUDIT_KEY, blocking=True,
                                   description="No promotion edited or deleted, no trusted file changed.")],
)
def trust_audit(home: SkillsHomeResource, gates: GateRunnerResource) -> dg.MaterializeResult:  # type: ignore[type-arg]
    h = home.home()
    report = audit(ForgeRecords(Ledger(h.ledger_path)), h, policy_path=gates.settings().policy_path,
                   refresh_stale=True)
    problems = report.problems()
    md = "\n".join(f"- {p}" for p in problems) if problems else "every promotion, registry entry and file checks out"
    if report.registry_note:
        md += f"\n\n(note: {report.registry_note})"
    return dg.MaterializeResult(
        metadata={
            "ok": dg.MetadataValue.bool(report.ok),
            "checked_skills": dg.MetadataValue.int(report.checked_skills),
            "promotions": dg.MetadataValue.int(report.promotions),
            "problems": dg.MetadataValue.md(md),
        },
        check_results=[dg.AssetCheckResult(check_name=CHECK_TRUST, passed=report.ok, description=md[:1000])],
    )


audit_job = dg.define_asset_job(
    "trust_audit", selection=dg.AssetSelection.assets(TRUST_AUDIT_KEY), executor_def=dg.in_process_executor,
    description="Re-verify the trusted registry.",
)
audit_schedule = dg.ScheduleDefinition(
    name="hourly_trust_audit", job=audit_job, cron_schedule="0 * * * *",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-verifies the registry every hour: hash drift, registry drift, policy changes.",
)
