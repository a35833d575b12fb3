"""`model_posteriors` carries its curves in a form the asset page draws inline, a table instead of
a wide markdown table, and one PNG per distinct picture."""

import dagster as dg

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.routing.posteriors import UI_INLINE_MARKDOWN
from kavi_assets.assets.learning import MODEL_POSTERIORS_KEY, model_posteriors
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource


def test_model_posteriors_metadata_draws_curves_inline(kavi_home: KaviHome) -> None:
    records = ForgeRecords(Ledger(kavi_home.ledger_path))
    for i, (model, ok) in enumerate([("recorded-coder-a", True), ("recorded-coder-a", False),
                                     ("recorded-coder-b", True)]):
        records.record_model_outcome(build_id=f"b{i}", name="word_count", model=model, task_type="READ_ONLY/simple",
                                     success=ok, failure_kind=None if ok else "VERIFY_TEST", latency_ms=100.0,
                                     tokens=10, cost_usd=None)
    resources = {"home": SkillsHomeResource(), "llm": LLMResource(), "gates": GateRunnerResource()}
    with dg.DagsterInstance.ephemeral() as instance:
        for _ in range(2):
            assert dg.materialize([model_posteriors], resources=resources, instance=instance).success
        event = instance.get_latest_materialization_event(MODEL_POSTERIORS_KEY)
    assert event is not None and event.asset_materialization is not None
    meta = event.asset_materialization.metadata
    table = meta["posteriors"]
    assert isinstance(table, dg.TableMetadataValue)
    assert {r.data["model"] for r in table.records} >= {"recorded-coder-a", "recorded-coder-b"}
    curves = meta["curves READ_ONLY / simple"]
    assert isinstance(curves, dg.MarkdownMetadataValue)
    assert curves.value.startswith("![READ_ONLY/simple](data:image/svg+xml,") and len(curves.value) < UI_INLINE_MARKDOWN
    assert "recorded-coder-a (mean 0.50, n=2)" in curves.value
    # Two materializations of the same posteriors: one PNG.
    plots = list((kavi_home.root / "plots").iterdir())
    assert [f"plots/{p.name} in the skills home" for p in plots] == [meta["plot"].value]


def test_the_learner_shows_coach_reviews_apart_from_builder_posteriors(kavi_home: KaviHome) -> None:
    """The coach's record per model (approvals, requests for changes, answers it could not give) is its own
    table on the learner's asset; the builder posteriors do not count it."""
    from kavi.ledger.coach_records import CoachReviewRow, record_review

    records = ForgeRecords(Ledger(kavi_home.ledger_path))
    for i, status in enumerate(["APPROVE", "REQUEST_CHANGES", "UNUSABLE"]):
        record_review(records, CoachReviewRow(
            review_id=f"r{i}", proposal_name="word_count", build_id=f"b{i}", builder_model="recorded-coder-b",
            model="recorded-coder-a", task_type="READ_ONLY/simple", ceremony_level="standard", status=status,
            verdict=None, findings=[], reason=None, request_sha256=None, answer_sha256=None))
    resources = {"home": SkillsHomeResource(), "llm": LLMResource(), "gates": GateRunnerResource()}
    with dg.DagsterInstance.ephemeral() as instance:
        assert dg.materialize([model_posteriors], resources=resources, instance=instance).success
        event = instance.get_latest_materialization_event(MODEL_POSTERIORS_KEY)
    assert event is not None and event.asset_materialization is not None
    meta = event.asset_materialization.metadata
    assert meta["outcomes"].value == 0  # no builder outcome came from the reviews
    reviews = meta["coach reviews"]
    assert isinstance(reviews, dg.MarkdownMetadataValue)
    assert reviews.value == ("- **recorded-coder-a** on READ_ONLY/simple: 1 approved, 1 changes requested, "
                             "1 without a usable answer")
    assert meta["coach_reviews"].value == 3
