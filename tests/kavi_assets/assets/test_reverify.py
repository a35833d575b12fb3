"""Re-verification in Dagster: the judging_fingerprint_moved sensor launches `reverify` when the judging fingerprint
moved; the re-verification asset is downstream of the fingerprint's data version, so the UI shows it stale when the
fingerprint changes; `skill_economics` emits a table and one float per skill for the Plots tab."""

from typing import Any

import dagster as dg
import pytest
from dagster._core.definitions.data_version import StaleStatus
from dagster._utils.test.data_versions import get_stale_status_resolver

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.ledger.verification_records import VerificationRecords
from kavi_assets.assets.reverify import (
    JUDGING_FINGERPRINT_KEY,
    REVERIFICATION_KEY,
    SKILL_ECONOMICS_KEY,
    judging_fingerprint,
    reverification,
    skill_economics,
)
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from sensors.reverify import judging_fingerprint_moved
from tests.factories import REFUSE_RE, trust_version


def _resources(home: KaviHome) -> dict[str, Any]:
    return {"home": SkillsHomeResource(root=str(home.root)), "gates": GateRunnerResource()}


def _sensor(home: KaviHome, instance: dg.DagsterInstance) -> Any:
    return judging_fingerprint_moved(dg.build_sensor_context(instance=instance, resources=_resources(home)))


def _meta(result: Any, key: dg.AssetKey) -> dict[str, Any]:
    [mat] = [m for m in result.asset_materializations_for_node("__".join(key.path))]
    return {k: v.value for k, v in mat.metadata.items()}


@pytest.mark.slow
def test_judging_fingerprint_moved_sensor_and_reverify_assets(kavi_home: KaviHome,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_EVIDENCE_LEVELS", "none")
    trust_version(kavi_home, coach=False)  # promoted without a recorded fingerprint: stale until re-verified
    assets = [judging_fingerprint, reverification, skill_economics]
    with dg.DagsterInstance.ephemeral() as instance:
        request = _sensor(kavi_home, instance)
        assert isinstance(request, dg.RunRequest) and request.tags["kavi/stale"] == "1"
        first = dg.materialize(assets[:2], instance=instance, resources=_resources(kavi_home))
        assert first.success and [c.passed for c in first.get_asset_check_evaluations()] == [True]
        assert _meta(first, REVERIFICATION_KEY)["reverified"] == 1
        assert _meta(first, REVERIFICATION_KEY)["failed"] == 0
        assert isinstance(_sensor(kavi_home, instance), dg.SkipReason)
        # Dagster's own staleness reading, as the UI shows it
        resolver = get_stale_status_resolver(instance, assets[:2])
        assert resolver.get_status(REVERIFICATION_KEY) == StaleStatus.FRESH

        (kavi_home.root / "policy.yaml").write_text(REFUSE_RE)  # the judges change
        moved = _sensor(kavi_home, instance)
        assert isinstance(moved, dg.RunRequest) and moved.run_key != request.run_key
        fp_only = dg.materialize([judging_fingerprint], instance=instance, resources=_resources(kavi_home),
                                 selection=[JUDGING_FINGERPRINT_KEY])
        assert fp_only.success
        resolver = get_stale_status_resolver(instance, assets[:2])
        assert resolver.get_status(REVERIFICATION_KEY) == StaleStatus.STALE  # what the UI shows

        second = dg.materialize(assets[:2], instance=instance, resources=_resources(kavi_home))
        assert _meta(second, REVERIFICATION_KEY)["marked_suspect"] == 1
        [check] = second.get_asset_check_evaluations()
        assert not check.passed and "word_count@1 (policy)" in (check.description or "")
        [suspect] = VerificationRecords(Ledger(kavi_home.ledger_path)).suspects()
        assert suspect.ref == "word_count@1"
        assert ForgeRecords(Ledger(kavi_home.ledger_path)).trusted_versions() == []

        econ = dg.materialize([skill_economics], instance=instance, resources=_resources(kavi_home))
        meta = _meta(econ, SKILL_ECONOMICS_KEY)
        assert "break-even uses" in meta["definition"]


def test_skill_economics_emits_a_table_and_a_float_per_skill(kavi_home: KaviHome,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_PRICES", "builder-m=3/15")
    trust_version(kavi_home, coach=False)
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize([skill_economics], instance=instance, resources=_resources(kavi_home))
    meta = _meta(result, SKILL_ECONOMICS_KEY)
    assert meta["forge_cost_usd/word_count"] == pytest.approx(0.009)
    assert isinstance(meta["forge_cost_usd/word_count"], float)
    assert [r.data["version"] for r in meta["versions"].records] == ["word_count@1"]
