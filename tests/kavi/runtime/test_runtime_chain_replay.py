"""Chains (mapping, schema failures, stop_on_failure, pre-checks) and replay (links, refusals)."""

from typing import Any

import pytest
from pydantic import ValidationError

from kavi.home import KaviHome
from kavi.runtime.chain import ChainSpec, run_chain
from kavi.runtime.errors import ChainMappingError, ConfirmationRequired, ReplayRefused, SkillNotTrusted
from kavi.runtime.executor import SkillRunner
from kavi.runtime.records import RecordNotFound
from kavi.runtime.replay import replay
from kavi.runtime.steps import ChainStep, resolve_path
from tests.kavi.runtime.runtime_skills import ECHO, Registry


@pytest.fixture
def notes(home: KaviHome) -> None:
    (home.vault_dir / "notes").mkdir(parents=True)
    (home.vault_dir / "notes" / "a.md").write_text("one two three", encoding="utf-8")
    (home.vault_dir / "notes" / "b.md").write_text("four", encoding="utf-8")


def _spec(data: dict[str, Any]) -> ChainSpec:
    return ChainSpec.model_validate(data)


@pytest.mark.usefixtures("notes")
def test_chain_maps_previous_output_and_links_records(runner: SkillRunner) -> None:
    spec = _spec(
        {
            "steps": [
                {"skill": "list_notes", "input": {"pattern": "notes/*.md"}},
                {"skill": "read_note", "from_prev": {"path": "results.1.path"}},
                {"skill": "echo", "input_template": {"text": "{path}:{words}|"}, "input": {"times": 2}},
            ]
        }
    )
    records = run_chain(runner, spec, confirmed=False)
    assert [r.success for r in records] == [True, True, True]
    assert records[1].input_data() == {"path": "notes/b.md"}
    assert records[1].output_data()["text"] == "four"
    assert records[2].output_data()["text"] == "notes/b.md:1|notes/b.md:1|"
    assert records[0].parent_execution_id is None
    assert records[1].parent_execution_id == records[0].execution_id
    assert records[2].parent_execution_id == records[1].execution_id
    assert len({r.session_id for r in records}) == 1
    assert runner.log.read_all() == records


@pytest.mark.usefixtures("notes")
def test_chain_from_step_and_typed_template(runner: SkillRunner) -> None:
    spec = _spec(
        {
            "steps": [
                {"skill": "list_notes", "input": {"pattern": "notes/*.md"}},
                {"skill": "read_note", "from_prev": {"path": "results.0.path"}},
                {
                    "skill": "echo",
                    "from_step": 0,
                    "input_template": {"text": "{{{results.-1.path}}}", "times": "{count}"},
                },
            ]
        }
    )
    records = run_chain(runner, spec, confirmed=False)
    assert records[2].success, records[2].error
    assert records[2].input_data() == {"text": "{notes/b.md}", "times": 2}
    assert records[2].parent_execution_id == records[1].execution_id


@pytest.mark.usefixtures("notes")
def test_mapping_failure_is_a_failure_record_and_stops(runner: SkillRunner, home: KaviHome) -> None:
    spec = _spec(
        {
            "steps": [
                {"skill": "list_notes", "input": {"pattern": "notes/*.md"}},
                {"skill": "read_note", "from_prev": {"path": "results.7.path"}},
                {"skill": "echo", "input": {"text": "never"}},
            ]
        }
    )
    records = run_chain(runner, spec, confirmed=False)
    assert [r.success for r in records] == [True, False]
    error = records[1].error or ""
    assert error.startswith("ChainMappingError: step 1 (read_note): path 'results.7.path'")
    assert "index 7 is out of range for results (2 items)" in error
    assert records[1].parent_execution_id == records[0].execution_id
    assert records[1].source_hash == runner.lookup("read_note").sha256
    assert runner.log.read_all() == records


@pytest.mark.usefixtures("notes")
def test_schema_failure_and_continue_past_failures(runner: SkillRunner) -> None:
    spec = _spec(
        {
            "stop_on_failure": False,
            "steps": [
                {"skill": "list_notes", "input": {"pattern": "notes/*.md"}},
                {"skill": "echo", "from_prev": {"text": "count"}},
                {"skill": "read_note", "from_prev": {"path": "text"}},
                {"skill": "echo", "from_step": 0, "from_prev": {"text": "results.0.nope"}},
                {"skill": "echo", "input": {"text": "still runs"}},
            ],
        }
    )
    records = run_chain(runner, spec, confirmed=False)
    assert [r.success for r in records] == [True, False, False, False, True]
    assert (records[1].error or "").startswith("InputValidationError: input does not match the schema of 'echo': ")
    assert "text: Input should be a valid string" in (records[1].error or "")
    assert "source step 1 (echo) failed" in (records[2].error or "")
    assert "no key 'nope' in results.0 (keys: path)" in (records[3].error or "")
    parents = [r.parent_execution_id for r in records]
    assert parents == [None] + [r.execution_id for r in records[:-1]]


@pytest.mark.usefixtures("notes")
def test_chain_refusals_come_before_any_step_runs(runner: SkillRunner) -> None:
    writes = _spec(
        {
            "steps": [
                {"skill": "echo", "input": {"text": "a"}},
                {"skill": "write_note", "input_template": {"path": "out.md", "content": "{text}"}},
            ]
        }
    )
    with pytest.raises(ConfirmationRequired, match="chain step 1 runs 'write_note', which is FILE_WRITE"):
        run_chain(runner, writes, confirmed=False)
    unknown = _spec({"steps": [{"skill": "echo", "input": {"text": "a"}}, {"skill": "ghost"}]})
    with pytest.raises(SkillNotTrusted, match="'ghost'"):
        run_chain(runner, unknown, confirmed=True)
    assert runner.log.read_all() == []
    records = run_chain(runner, writes, confirmed=True)
    assert [r.success for r in records] == [True, True]
    assert (runner.home.vault_dir / "out.md").read_text(encoding="utf-8") == "a"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"steps": []}, "at least 1 item"),
        ({"steps": [{"skill": "echo", "from_prev": {"text": "x"}}]}, "step 0 .* maps from a previous step"),
        (
            {"steps": [{"skill": "echo"}, {"skill": "echo", "from_step": 1, "from_prev": {"text": "x"}}]},
            r"from_step 1 must name an earlier step \(0\.\.0\)",
        ),
        ({"steps": [{"skill": "echo", "input": {"t": 1}, "from_prev": {"t": "x"}}]}, "set by both input and from_prev"),
        ({"steps": [{"skill": "echo", "extra": 1}]}, "Extra inputs are not permitted"),
    ],
)
def test_chain_spec_validation(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ChainSpec.model_validate(data)


def test_resolve_path_errors() -> None:
    data = {"a": [{"b": 1}], "s": "text"}
    assert resolve_path(data, "a.0.b") == 1
    assert resolve_path(data, "a.-1") == {"b": 1}
    with pytest.raises(ChainMappingError, match="a is a list; 'x' is not an index"):
        resolve_path(data, "a.x")
    with pytest.raises(ChainMappingError, match="cannot look up 'y' in s, a str value"):
        resolve_path(data, "s.y")
    assert ChainStep(skill="echo").maps_from_source is False


def test_replay_links_to_original(runner: SkillRunner, registry: Registry) -> None:
    original = runner.run("echo", {"text": "again", "times": 2}, confirmed=False)
    again = replay(runner, runner.log, original.execution_id[:6], confirmed=False, current_hash=registry.current_hash)
    assert again.success
    assert again.output_json == original.output_json
    assert again.replay_of == original.execution_id
    assert again.parent_execution_id == original.execution_id
    assert again.session_id == original.session_id
    assert again.execution_id != original.execution_id


def test_replay_refused_after_hash_change(runner: SkillRunner, registry: Registry) -> None:
    original = runner.run("echo", {"text": "x"}, confirmed=False)
    registry.install("echo", ECHO.replace("Repeat text.", "Repeat text (v2)."))
    with pytest.raises(ReplayRefused, match=r"changed since it ran \(ran sha256 [0-9a-f]{12}, trusted now"):
        replay(runner, runner.log, original.execution_id, confirmed=True, current_hash=registry.current_hash)
    assert len(runner.log.read_all()) == 1


def test_replay_refused_when_runner_hash_disagrees(runner: SkillRunner, registry: Registry) -> None:
    original = runner.run("echo", {"text": "x"}, confirmed=False)
    registry.install("echo", ECHO.replace("Repeat text.", "Repeat text (v2)."))
    with pytest.raises(ReplayRefused, match="the runner would load 'echo'"):
        replay(runner, runner.log, original.execution_id, confirmed=True, current_hash=lambda _: original.source_hash)


def test_replay_refused_when_untrusted_and_needs_confirmation(runner: SkillRunner, registry: Registry) -> None:
    write = runner.run("write_note", {"path": "r.md", "content": "x"}, confirmed=True)
    with pytest.raises(ConfirmationRequired):
        replay(runner, runner.log, write.execution_id, confirmed=False, current_hash=registry.current_hash)
    assert replay(runner, runner.log, write.execution_id, confirmed=True, current_hash=registry.current_hash).success
    del registry["write_note"]
    with pytest.raises(ReplayRefused, match="no longer trusted"):
        replay(runner, runner.log, write.execution_id, confirmed=True, current_hash=registry.current_hash)
    with pytest.raises(ReplayRefused, match="no longer trusted"):
        replay(runner, runner.log, write.execution_id, confirmed=True, current_hash=lambda _: write.source_hash)
    with pytest.raises(RecordNotFound):
        replay(runner, runner.log, "0000", confirmed=True, current_hash=registry.current_hash)
