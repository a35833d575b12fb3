"""The proposal-intake sensor: valid files become partitions and runs; invalid ones are moved aside, not lost."""

from pathlib import Path
from typing import Any

import dagster as dg
import yaml

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource
from sensors.intake import proposal_intake


def _evaluate(home: KaviHome, instance: dg.DagsterInstance) -> Any:
    ctx = dg.build_sensor_context(
        instance=instance,
        resources={"home": SkillsHomeResource(root=str(home.root)), "llm": LLMResource(),
                   "gates": GateRunnerResource()},
    )
    return proposal_intake(ctx)


def test_intake_valid_and_invalid(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    (kavi_home.inbox_dir / "word_count.yaml").write_text(yaml.safe_dump(proposal_data))
    bad = dict(proposal_data, name="Bad Name")
    (kavi_home.inbox_dir / "bad.yaml").write_text(yaml.safe_dump(bad))
    (kavi_home.inbox_dir / "broken.yaml").write_text("name: [unclosed\n")
    with dg.DagsterInstance.ephemeral() as instance:
        result = _evaluate(kavi_home, instance)
        assert isinstance(result, dg.SensorResult)
        assert [r.partition_key for r in result.run_requests or []] == ["word_count"]
        assert result.run_requests and result.run_requests[0].run_key.startswith("intake:word_count:")
        adds = result.dynamic_partitions_requests or []
        assert adds and list(adds[0].partition_keys or []) == ["word_count"]
        # The sensor context does not apply partition requests; apply them as the daemon would.
        instance.add_dynamic_partitions("proposals", list(adds[0].partition_keys or []))
        again = _evaluate(kavi_home, instance)
        assert isinstance(again, dg.SkipReason)
    rejected = sorted(p.name for p in kavi_home.rejected_dir.iterdir())
    assert len([n for n in rejected if n.endswith(".error.txt")]) == 2
    errors = " ".join((kavi_home.rejected_dir / n).read_text() for n in rejected if n.endswith(".error.txt"))
    assert "snake_case" in errors and "malformed YAML" in errors
    assert ForgeRecords(Ledger(kavi_home.ledger_path)).require_proposal("word_count")
    assert not list(kavi_home.inbox_dir.glob("*.yaml"))


def test_empty_inbox_skips(kavi_home: KaviHome) -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        result = _evaluate(kavi_home, instance)
    assert isinstance(result, dg.SkipReason)
    assert "no proposal files" in str(result.skip_message)


def test_inbox_path_is_the_homes(kavi_home: KaviHome) -> None:
    assert kavi_home.inbox_dir == Path(kavi_home.root) / "inbox"
