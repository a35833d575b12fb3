"""Model costs reach routing from configuration: the resource field, or KAVI_LLM_COSTS at run time."""

import pytest

from kavi.settings_parsers import parse_costs
from resources.gates import GateRunnerResource


def test_parse_costs() -> None:
    assert parse_costs("a=0.1, b = 2,,") == {"a": 0.1, "b": 2.0}
    assert parse_costs("") == {}
    # Model names may hold '=' only before the last one; the cost is what follows it.
    assert parse_costs("org/model=x=3") == {"org/model=x": 3.0}


@pytest.mark.parametrize("raw", ["oops", "a=", "=1", "a=-1", "a=cheap"])
def test_malformed_costs_are_named(raw: str) -> None:
    with pytest.raises(ValueError, match="KAVI_LLM_COSTS entry"):
        parse_costs(raw)


def test_costs_from_env_and_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_LLM_COSTS", "m1=0.02,m2=0.005")
    assert GateRunnerResource().settings().model_costs == {"m1": 0.02, "m2": 0.005}
    assert GateRunnerResource(model_costs={"x": 1.0}).settings().model_costs == {"x": 1.0}
    monkeypatch.delenv("KAVI_LLM_COSTS")
    assert GateRunnerResource().settings().model_costs == {}
