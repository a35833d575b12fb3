"""The model-outcome learner: Beta posteriors per (model, task type) from every attempt's outcome."""

from datetime import UTC, datetime

import dagster as dg

from kavi_assets.ledger.records import ForgeRecords
from kavi_assets.ledger.store import Ledger
from kavi_assets.routing.posteriors import (
    OutcomeCounts,
    plot_posteriors,
    posteriors_from_counts,
    posteriors_markdown,
)
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource

MODEL_POSTERIORS_KEY = dg.AssetKey(["forge", "model_posteriors"])


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
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    png = plot_posteriors(posteriors, h.root / "plots" / f"model_posteriors_{stamp}.png")
    return dg.MaterializeResult(
        metadata={
            "outcomes": dg.MetadataValue.int(sum(c.successes + c.failures for c in counts)),
            "models": dg.MetadataValue.json(models),
            "posteriors": dg.MetadataValue.md(posteriors_markdown(posteriors)),
            "plot": dg.MetadataValue.path(str(png)),
            "table": dg.MetadataValue.json([p.__dict__ if hasattr(p, "__dict__") else str(p) for p in posteriors]),
        }
    )
