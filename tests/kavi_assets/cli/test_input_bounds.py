"""A bound a proposal declares on an input field (max_size) is enforced by the runtime before any
worker sees the input, and shown in the tool's input schema; the resource gate judges the skill up to it."""

import json

import pytest
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.runtime.worker import sandbox_problem
from kavi_assets.cli.main import app
from kavi_assets.cli.runtime_cmd import _runner
from tests.factories import trust_version, word_count_spec

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no worker sandbox here: {sandbox_problem()}")
runner = CliRunner()


def _bounded_spec(bound: int) -> dict[str, object]:
    spec = word_count_spec()
    spec["inputs"] = [{**f, "max_size": bound} for f in spec["inputs"]]  # type: ignore[attr-defined]
    return spec


def test_kavi_run_refuses_a_value_over_the_declared_bound_and_runs_one_within(kavi_home: KaviHome) -> None:
    trust_version(kavi_home, _bounded_spec(40))
    over = runner.invoke(app, ["run", "word_count", "--json", json.dumps({"text": "word " * 9})])
    assert over.exit_code == 2, over.output  # an input the skill does not accept: a usage error
    assert "input field 'text' has 45 characters, over its bound of 40" in " ".join(over.output.split())
    within = runner.invoke(app, ["run", "word_count", "--json", json.dumps({"text": "word " * 8})])
    assert within.exit_code == 0, within.output
    records = [json.loads(line) for line in kavi_home.executions_log.read_text().splitlines()
               if '"kind":"started"' not in line]
    assert [r.get("refusal") for r in records] == ["SCHEMA", None]


def test_the_tool_schema_carries_the_bound(kavi_home: KaviHome) -> None:
    trust_version(kavi_home, _bounded_spec(40))
    _, _, trusted = _runner(kavi_home)
    from kavi.runtime.executor import list_skills

    (info,) = list_skills(trusted.latest())
    assert info.input_schema is not None
    assert info.input_schema["properties"]["text"]["maxLength"] == 40
