"""On the Dagster side: the `forge/decomposition` asset asks the (recorded) model for a
decomposition, adds the children as partitions, and shows parent → children → composition in its metadata."""

from collections.abc import Iterator

import dagster as dg
import pytest

from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.home import KaviHome
from kavi.lifecycle import ProposalStatus
from kavi.proposals.model import load_proposal
from kavi_assets.assets.decompose import DECOMPOSITION_KEY
from tests.factories import REPO

EXAMPLES = REPO / "kavi" / "examples" / "proposals"


@pytest.fixture()
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


def test_the_decomposition_asset_decomposes_and_shows_the_tree(kavi_home: KaviHome, instance: dg.DagsterInstance,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from kavi_assets.definitions import current_definitions

    monkeypatch.setenv("KAVI_DECOMPOSE_ABOVE", "1")  # decompose by complexity, before any attempt
    ctx = ForgeContext.open(kavi_home, lambda: None)  # type: ignore[arg-type, return-value]
    intake(ctx, load_proposal(EXAMPLES / "email_domain_report.yaml"), None)
    instance.add_dynamic_partitions("proposals", ["email_domain_report"])
    result = current_definitions().resolve_job_def("decompose").execute_in_process(
        partition_key="email_domain_report", instance=instance, raise_on_error=False)
    assert result.success
    mats = [m for m in result.asset_materializations_for_node("forge__decomposition")
            if m.asset_key == DECOMPOSITION_KEY]
    meta = mats[0].metadata
    assert meta["step"].value == "decomposed"
    assert meta["decomposition_status"].value == "WAITING"
    assert meta["children"].value == ["find_addresses", "domains_of_addresses"]
    tree = meta["tree"].value
    assert "**email_domain_report** — DECOMPOSED" in tree and "**find_addresses** — PROPOSED" in tree
    assert "composition: find_addresses → domains_of_addresses" in tree
    assert "steps.0.addresses" in meta["composition"].value
    for child in ("find_addresses", "domains_of_addresses"):
        assert instance.has_dynamic_partition("proposals", child)
    assert ctx.records.require_proposal("email_domain_report").status is ProposalStatus.DECOMPOSED
