"""Session trees and the log tail, as rich, plain text and JSON."""

import io

import pytest
from rich.console import Console

from kavi.runtime.chain import ChainSpec, run_chain
from kavi.runtime.executor import SkillRunner
from kavi.runtime.records import AmbiguousPrefix
from kavi.runtime.replay import replay
from kavi.runtime.sessions import (
    SessionNotFound,
    format_duration,
    records_to_json,
    render_text,
    render_tree,
    session_tree,
    tail,
    tree_to_json,
)
from tests.kavi.runtime.runtime_skills import Registry


@pytest.fixture
def populated(runner: SkillRunner, registry: Registry) -> SkillRunner:
    runner.run("echo", {"text": "first session"}, confirmed=False, session_id="a" * 32)
    spec = ChainSpec.model_validate(
        {
            "steps": [
                {"skill": "echo", "input": {"text": "hi"}},
                {"skill": "echo", "input_template": {"text": "boom"}},
                {"skill": "echo", "input": {"text": "not reached"}},
            ]
        }
    )
    chain = run_chain(runner, spec, confirmed=False, session_id="b" * 32)
    replay(runner, runner.log, chain[0].execution_id, confirmed=False, current_hash=registry.current_hash)
    return runner


def test_latest_session_tree_text(populated: SkillRunner) -> None:
    records = populated.log.read_all()
    tree = session_tree(records)
    assert tree.session_id == "b" * 32
    first, failed, replayed = (r for r in records if r.session_id == "b" * 32)
    assert [n.record for n in tree.roots] == [first]
    assert [n.record for n in tree.roots[0].children] == [failed, replayed]
    assert tree.walk() == [first, failed, replayed]

    text = render_text(tree)
    lines = text.splitlines()
    assert lines[0] == f"session {'b' * 32}"
    assert lines[1].startswith(f"└── ok   {first.short_id} echo ")
    assert lines[2].startswith(f"    ├── FAIL {failed.short_id} echo ")
    assert lines[2].endswith(" - ValueError: boom requested")
    assert lines[3].startswith(f"    └── ok   {replayed.short_id} echo ")
    assert f"(replay of {first.short_id})" in lines[3]


def test_rich_tree_and_json(populated: SkillRunner) -> None:
    records = populated.log.read_all()
    tree = session_tree(records, session_id="bbbb")
    buffer = io.StringIO()
    Console(file=buffer, width=200, color_system=None).print(render_tree(tree))
    out = buffer.getvalue()
    assert "FAIL" in out and "ValueError: boom requested" in out and "replay of" in out

    data = tree_to_json(tree)
    assert data["session_id"] == "b" * 32
    root = data["roots"][0]
    assert root["status"] == "ok" and root["skill"] == "echo"
    assert [c["status"] for c in root["children"]] == ["FAIL", "ok"]
    assert root["children"][1]["replay_of"] == root["execution_id"]


def test_session_selection_errors(populated: SkillRunner) -> None:
    records = populated.log.read_all()
    assert session_tree(records, session_id="a" * 32).roots[0].record.input_data() == {"text": "first session"}
    with pytest.raises(SessionNotFound, match="no session matches 'zzz'"):
        session_tree(records, session_id="zzz")
    with pytest.raises(SessionNotFound, match="no records"):
        session_tree([])
    with pytest.raises(ValueError, match="give a session id"):
        session_tree(records, latest=False)
    twins = [records[0].model_copy(update={"session_id": "cc1"}), records[0].model_copy(update={"session_id": "cc2"})]
    with pytest.raises(AmbiguousPrefix, match="ambiguous"):
        session_tree(twins, session_id="cc")


def test_parent_cycle_is_shown_not_dropped(populated: SkillRunner) -> None:
    a, b = populated.log.read_all()[1:3]
    a2 = a.model_copy(update={"parent_execution_id": b.execution_id})
    tree = session_tree([a2, b])
    assert {r.execution_id for r in tree.walk()} == {a.execution_id, b.execution_id}


def test_tail_filters(populated: SkillRunner) -> None:
    records = populated.log.read_all()
    assert tail(records, 2) == records[-2:]
    assert tail(records, 0) == []
    failures = tail(records, 10, failures_only=True)
    assert len(failures) == 1 and failures[0].error == "ValueError: boom requested"
    assert tail(records, 10, skill="nope") == []
    data = records_to_json(tail(records, 1))
    assert data[0]["status"] == "ok" and data[0]["replay_of"] == records[1].execution_id


def test_format_duration() -> None:
    assert format_duration(1.234) == "1.2 ms"
    assert format_duration(2500) == "2.50 s"
