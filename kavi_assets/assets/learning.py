"""The model-outcome learner: Beta posteriors per (model, task type) from every attempt's outcome."""

import dagster as dg

from kavi.ledger.coach_records import review_summary
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.routing.posteriors import (
    OutcomeCounts,
    plot_posteriors,
    posterior_curves_markdown,
    posteriors_from_counts,
    posteriors_table_rows,
)
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource

MODEL_POSTERIORS_KEY = dg.AssetKey(["forge", "model_posteriors"])
PLOTS_KEPT = 20  # plots/ keeps the newest PNGs, one per distinct picture


@dg.asset(
    key=MODEL_POSTERIORS_KEY,
    group_name="learning",
    kinds={"duckdb", "python"},
    description="Beta posteriors of each model's success per task type, learned from every attempt.",
)
def model_posteriors(
    home: SkillsHomeResource, llm: LLMResource, gates: GateRunnerResource
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    h = home.home()
    records = ForgeRecords(Ledger(h.ledger_path))
    # Summed by the ledger: the learner reads one row per (model, task type), not every outcome ever recorded.
    counts = [OutcomeCounts(*row) for row in records.outcome_summary()]
    models = sorted(set(llm.get_client().settings.models) | {c.model for c in counts})
    posteriors = posteriors_from_counts(counts, models=models, prior_weight=gates.settings().prior_weight)
    png = plot_posteriors(posteriors, h.root / "plots", keep=PLOTS_KEPT)
    rows = posteriors_table_rows(posteriors)
    columns = [dg.TableColumn(name, "string") for name in (rows[0] if rows else ["model", "task type"])]
    meta: dict[str, dg.MetadataValue] = {
        "outcomes": dg.MetadataValue.int(sum(c.successes + c.failures for c in counts)),
        "models": dg.MetadataValue.text(", ".join(models)),
        # A table entry, not a wide markdown table: the asset page shows it inline and without clipping.
        "posteriors": dg.MetadataValue.table([dg.TableRecord(r) for r in rows], dg.TableSchema(columns)),
    }
    # The curves themselves, one small image per task type, drawn inline on the asset page (see
    # posterior_curves_markdown); the PNG is the same picture in full. Spaces in the key let its cell wrap, which
    # leaves the values their room.
    for ttype in sorted({p.task_type for p in posteriors}):
        meta[f"curves {ttype.replace('/', ' / ')}"] = dg.MetadataValue.md(posterior_curves_markdown(posteriors, ttype))
    # Relative to the skills home: a full path is one unbreakable string that widens the metadata panel until its
    # other values (the table, the curves) are clipped on the right.
    meta["plot"] = dg.MetadataValue.text(f"{png.relative_to(h.root)} in the skills home")
    meta["posteriors_json"] = dg.MetadataValue.json([p.to_dict() for p in posteriors])
    # The coach's own record, kept apart: a review never moves a builder posterior above.
    reviews = review_summary(records)
    meta["coach_reviews"] = dg.MetadataValue.int(sum(a + c + f for _, _, a, c, f in reviews))
    if reviews:
        # A list, not a table: five more columns would widen the metadata panel past the page (see the browser test).
        meta["coach reviews"] = dg.MetadataValue.md("\n".join(
            f"- **{m}** on {t}: {a} approved, {c} changes requested, {f} without a usable answer"
            for m, t, a, c, f in reviews))
    return dg.MaterializeResult(metadata=meta)
