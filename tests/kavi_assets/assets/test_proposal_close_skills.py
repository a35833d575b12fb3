"""The proposal asset lists the closest trusted skills the duplicate guard found when its spec was proposed (the
ledger's close_skills, written by the guard every door runs): what a person sees in the Dagster UI."""

import dagster as dg

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.proposals.model import parse_proposal
from kavi.search.guard import check_duplicates
from kavi.search.index import SearchConfig
from kavi_assets.assets.forge import PROPOSAL_KEY, proposal
from kavi_assets.assets.partitions import PROPOSALS
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource
from tests.factories import trust_example


def test_the_proposal_asset_lists_its_closest_trusted_skills(kavi_home: KaviHome) -> None:
    for name in ("word_count", "slugify_title"):
        trust_example(kavi_home, name)
    records = ForgeRecords(Ledger(kavi_home.ledger_path))
    spec = {"name": "count_text_words", "side_effect_class": "READ_ONLY",
            "description": "Tell how many words, lines and characters a piece of text has.",
            "inputs": [{"name": "text", "type": "str"}],
            "outputs": [{"name": "words", "type": "int"}, {"name": "lines", "type": "int"}],
            "examples": [{"input": {"text": "hello world"}, "expected": {"words": 2, "lines": 1}}]}
    prop = parse_proposal(spec)
    result = check_duplicates(kavi_home, records, prop, SearchConfig(embedder="none", duplicate_score=0.95))
    assert result.refusal() is None
    records.register_proposal(prop, source_path=None, complexity=1.0)
    resources = {"home": SkillsHomeResource(), "llm": LLMResource(), "gates": GateRunnerResource()}
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(PROPOSALS, ["count_text_words"])
        assert dg.materialize([proposal], resources=resources, instance=instance,
                              partition_key="count_text_words").success
        event = instance.get_latest_materialization_event(PROPOSAL_KEY)
    assert event is not None and event.asset_materialization is not None
    meta = event.asset_materialization.metadata
    table = meta["closest_trusted_skills"]
    assert isinstance(table, dg.MarkdownMetadataValue)
    assert "| word_count@1 |" in table.value and "warned" in table.value
    assert "only word_count has characters: int" in table.value  # how the fields differ
    assert meta["search_ranking"].value.startswith("BM25 only")  # type: ignore[attr-defined]
    # A revised spec has not been through the guard: its page lists nothing rather than the old findings.
    records.register_proposal(parse_proposal({**spec, "description": "Count the words of a text."}),
                              source_path=None, complexity=1.0)
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(PROPOSALS, ["count_text_words"])
        dg.materialize([proposal], resources=resources, instance=instance, partition_key="count_text_words")
        again = instance.get_latest_materialization_event(PROPOSAL_KEY)
    assert again is not None and again.asset_materialization is not None
    assert "closest_trusted_skills" not in again.asset_materialization.metadata
