"""Proposals: valid ones load from YAML and JSON; invalid ones fail with a clear message."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kavi.proposals.model import ProposalError, load_proposal, parse_proposal, proposal_json_schema


def test_valid_yaml_and_json(tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    y = tmp_path / "p.yaml"
    y.write_text(yaml.safe_dump(proposal_data))
    j = tmp_path / "p.json"
    j.write_text(json.dumps(proposal_data))
    assert load_proposal(y) == load_proposal(j)
    assert load_proposal(y).class_name == "WordCount"
    assert "holdout_examples" not in load_proposal(y).builder_view()


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("name", "WordCount", "snake_case"),
        ("name", "class", "keyword"),
        ("name", "json", "standard-library"),
        ("name", "a" * 65, "at most 64"),
        ("name", "double__underscore", "snake_case"),
        ("side_effect_class", "ROOT", "side_effect_class"),
        ("inputs", [{"name": "x", "type": "object"}], "not supported"),
        ("examples", [{"input": {"nope": 1}, "expected": {"count": 1}}], "unknown fields"),
        ("required_secrets", ["TOKEN"], "only allowed with side_effect_class SECRET_READ"),
    ],
)
def test_invalid_fields_are_named(proposal_data: dict[str, Any], field: str, value: Any, needle: str) -> None:
    proposal_data[field] = value
    with pytest.raises(ProposalError) as err:
        parse_proposal(proposal_data, "p.yaml")
    assert needle in str(err.value)
    assert "p.yaml" in str(err.value)


def test_missing_fields_listed(proposal_data: dict[str, Any]) -> None:
    del proposal_data["outputs"]
    del proposal_data["examples"]
    with pytest.raises(ProposalError) as err:
        parse_proposal(proposal_data)
    assert "outputs: Field required" in str(err.value)
    assert "examples: Field required" in str(err.value)


def test_malformed_yaml_reports_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ndescription: [unclosed\n")
    with pytest.raises(ProposalError) as err:
        load_proposal(bad)
    assert "malformed YAML" in str(err.value) and "line" in str(err.value)


def test_not_a_mapping_and_missing_file(tmp_path: Path) -> None:
    f = tmp_path / "list.yaml"
    f.write_text("- 1\n- 2\n")
    with pytest.raises(ProposalError, match="must be a mapping"):
        load_proposal(f)
    with pytest.raises(ProposalError, match="no such file"):
        load_proposal(tmp_path / "absent.yaml")


def test_json_schema_exported() -> None:
    schema = proposal_json_schema()
    assert schema["title"] == "Kavi Forge skill proposal"
    assert "side_effect_class" in schema["properties"]
