"""Dagster glue of re-verification: the judges' fingerprint as a data version, the re-verification of trusted versions
downstream of it (stale in the UI when the fingerprint's data version moved since it last ran), and the economics
of every trusted skill (a table, and float metadata per skill so the Plots tab draws cost and break-even over time)."""

import dagster as dg

from kavi.forge.context import ForgeContext
from kavi.forge.economics import DEFINITION, economics
from kavi.forge.reverify import fingerprint_for, reverify, stale_versions
from kavi.ledger.verification_records import VerificationRecords
from kavi.runtime.ingest import ingest_execution_log
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource

JUDGING_FINGERPRINT_KEY = dg.AssetKey(["forge", "judging_fingerprint"])
REVERIFICATION_KEY = dg.AssetKey(["forge", "reverification"])
SKILL_ECONOMICS_KEY = dg.AssetKey(["forge", "skill_economics"])
REVERIFY_JOB = "reverify"
CHECK_STILL_TRUSTED = "still_trusted"


def _no_model() -> object:
    raise RuntimeError("re-verification makes no model call")


def _ctx(home: SkillsHomeResource, gates: GateRunnerResource) -> ForgeContext:
    return ForgeContext.open(home.home(), _no_model, gates.settings())  # type: ignore[arg-type]


class ReverifyConfig(dg.Config):
    all_versions: bool = False  # re-verify every trusted version, not only those judged under another fingerprint


@dg.asset(
    key=JUDGING_FINGERPRINT_KEY,
    group_name="trust",
    kinds={"python"},
    code_version="1",
    description="What judges skills now: Python, ruff, mypy, pytest, coverage, hypothesis, the policy files' hash and "
                "the gate configuration. Its data version is the fingerprint's digest: when it moves, the "
                "re-verification downstream shows as stale.",
)
def judging_fingerprint(home: SkillsHomeResource, gates: GateRunnerResource) -> dg.MaterializeResult:  # type: ignore[type-arg]
    ctx = _ctx(home, gates)
    fp = fingerprint_for(ctx)
    VerificationRecords(ctx.records.ledger).record_fingerprint(fp.digest, fp.parts)
    meta: dict[str, dg.RawMetadataValue] = {
        name: dg.MetadataValue.text(str(fp.parts[name])) for name in ("python", "ruff", "mypy", "pytest", "coverage",
                                                                     "hypothesis", "policy")}
    meta["digest"] = dg.MetadataValue.text(fp.digest)
    meta["gates"] = dg.MetadataValue.json(fp.parts["gates"])
    return dg.MaterializeResult(metadata=meta, data_version=dg.DataVersion(fp.digest))


@dg.asset(
    key=REVERIFICATION_KEY,
    deps=[JUDGING_FINGERPRINT_KEY],
    group_name="trust",
    kinds={"duckdb", "python"},
    code_version="1",
    description="Re-runs every gate on the trusted versions judged under another fingerprint (or on all of them), "
                "records each verdict beside the earlier ones, and marks a version that now fails SUSPECT.",
    check_specs=[dg.AssetCheckSpec(CHECK_STILL_TRUSTED, asset=REVERIFICATION_KEY,
                                   description="Every re-verified version passed under today's judges.")],
)
def reverification(context: dg.AssetExecutionContext, config: ReverifyConfig, home: SkillsHomeResource,
                   gates: GateRunnerResource) -> dg.MaterializeResult:  # type: ignore[type-arg]
    ctx = _ctx(home, gates)
    fp = fingerprint_for(ctx)
    results = reverify(ctx, None, only_stale=not config.all_versions, actor=f"dagster run {context.run.run_id[:8]}")
    failed = [r for r in results if r.ran and not r.passed]
    rows = [f"| {r.ref} | {'passed' if r.passed else 'FAILED' if r.ran else 'not run'} | "
            f"{'; '.join(f['gate'] for f in r.failing) or '–'} | {'SUSPECT' if r.marked_suspect else ''} | "
            f"{r.duration_s:.1f}s |" for r in results]
    table = "\n".join(["| version | verdict | failing gates | marked | time |", "| --- | --- | --- | --- | --- |",
                       *rows]) if rows else "every trusted version was already verified under this fingerprint"
    return dg.MaterializeResult(metadata={
        "fingerprint": dg.MetadataValue.text(fp.digest),
        "reverified": dg.MetadataValue.int(sum(1 for r in results if r.ran)),
        "failed": dg.MetadataValue.int(sum(1 for r in results if r.ran and not r.passed)),
        "marked_suspect": dg.MetadataValue.int(sum(1 for r in results if r.marked_suspect)),
        "duration_s": dg.MetadataValue.float(float(round(sum(r.duration_s for r in results), 3))),
        "still_stale": dg.MetadataValue.int(len(stale_versions(ctx, fp))),
        "results": dg.MetadataValue.md(table),
    }, check_results=[dg.AssetCheckResult(
        check_name=CHECK_STILL_TRUSTED, passed=not failed,
        description=("now SUSPECT: " + "; ".join(f"{r.ref} ({', '.join(f['gate'] for f in r.failing)})"
                                               for r in failed))[:1000] if failed else "every re-verified version "
                                                                                        "passed")])


@dg.asset(
    key=SKILL_ECONOMICS_KEY,
    group_name="trust",
    kinds={"duckdb"},
    description="Each trusted version's forge cost (every attempt, research and independents included), executions "
                "and break-even uses. " + DEFINITION,
)
def skill_economics(home: SkillsHomeResource) -> dg.MaterializeResult:  # type: ignore[type-arg]
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger

    h = home.home()
    records = ForgeRecords(Ledger(h.ledger_path))
    ingest_execution_log(records.ledger, h.executions_log)
    rows = economics(records, h)
    columns = [dg.TableColumn(n, t) for n, t in (
        ("version", "string"), ("attempts", "int"), ("failed_attempts", "int"), ("forge_cost_usd", "float"),
        ("tokens_in", "int"), ("tokens_out", "int"), ("forge_wall_s", "float"), ("executions", "int"),
        ("executions_total_s", "float"), ("executions_median_ms", "float"), ("saving_per_use_usd", "float"),
        ("break_even_uses", "int"))]
    records_rows = [dg.TableRecord({
        "version": r.ref, "attempts": r.attempts, "failed_attempts": r.failed_attempts,
        "forge_cost_usd": round(r.forge_cost_usd, 6), "tokens_in": sum(m.prompt_tokens for m in r.by_model),
        "tokens_out": sum(m.completion_tokens for m in r.by_model), "forge_wall_s": round(r.forge_wall_s, 3),
        "executions": r.executions, "executions_total_s": round(r.executions_total_s, 3),
        "executions_median_ms": round(r.executions_median_ms or 0.0, 3),
        "saving_per_use_usd": round(r.saving_per_use_usd, 6),
        "break_even_uses": -1 if r.break_even_uses is None else r.break_even_uses}) for r in rows]
    meta: dict[str, dg.RawMetadataValue] = {
        "versions": dg.MetadataValue.table(records_rows, schema=dg.TableSchema(columns=columns)),
        "total_forge_cost_usd": dg.MetadataValue.float(float(round(sum(r.forge_cost_usd for r in rows), 6))),
        "definition": dg.MetadataValue.text(DEFINITION),
    }
    latest = {r.name: r for r in rows}  # one float per skill (its latest version): Dagster plots them over time
    for name, r in sorted(latest.items()):
        meta[f"forge_cost_usd/{name}"] = dg.MetadataValue.float(float(round(r.forge_cost_usd, 6)))
        meta[f"executions/{name}"] = dg.MetadataValue.float(float(r.executions))
        if r.break_even_uses is not None:
            meta[f"break_even_uses/{name}"] = dg.MetadataValue.float(float(r.break_even_uses))
    return dg.MaterializeResult(metadata=meta)


reverify_job = dg.define_asset_job(
    REVERIFY_JOB,
    selection=dg.AssetSelection.assets(JUDGING_FINGERPRINT_KEY, REVERIFICATION_KEY),
    description="Record today's judging fingerprint and re-run the gates on the trusted versions it makes stale.",
    executor_def=dg.in_process_executor,
)
