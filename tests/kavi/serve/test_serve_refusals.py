"""MCP calls through the one door: input fields the schema does not name refused (and the published schemas say
so), the surrogate case leaving no file and a record, every refusal recorded, no host path or traceback in an
error."""

from pathlib import Path

from mcp import types

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.runtime.records import ExecutionLog
from kavi.serve.catalog import ServePolicy, as_anthropic, as_openai
from kavi.serve.server import SkillToolServer
from kavi.skills.base import SideEffectClass
from kavi_assets.cli.runtime_cmd import _runner
from tests.factories import example_spec, trust_example

CALLER = "mcp:t/1"
WRITE = ServePolicy(frozenset({SideEffectClass.READ_ONLY, SideEffectClass.FILE_WRITE}))


def _text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _files(home: KaviHome) -> list[Path]:
    return [p for p in Path(home.vault_dir).rglob("*") if p.is_file()]


def test_published_schemas_close_the_input(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "word_count")
    server = SkillToolServer(kavi_home, _runner)
    tools = {t.name: t for t in server.tools()}
    assert tools["word_count"].inputSchema["additionalProperties"] is False
    specs = list(server.catalog.tools.values())
    assert as_openai(specs)[0]["function"]["parameters"]["additionalProperties"] is False
    assert as_anthropic(specs)[0]["input_schema"]["additionalProperties"] is False


def test_extra_field_is_refused_and_recorded(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "word_count")
    server = SkillToolServer(kavi_home, _runner)
    result = server.call("word_count", {"text": "a b", "verbose": True}, CALLER)
    assert result.isError and "was refused" in _text(result)
    assert "verbose: Extra inputs are not permitted" in _text(result)
    [record] = ExecutionLog(kavi_home.executions_log).read_all()
    assert record.refusal == "SCHEMA" and record.caller == CALLER
    assert result.meta is not None and result.meta["kavi/execution_id"] == record.execution_id


def test_surrogate_in_an_extra_field_writes_nothing_and_leaves_a_record(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "write_note")
    server = SkillToolServer(kavi_home, _runner, WRITE)
    args = {**example_spec("write_note")["examples"][0]["input"], "note": "\ud800"}
    result = server.call("write_note", args, CALLER)
    assert result.isError and "was refused" in _text(result)
    assert _files(kavi_home) == []
    kavi_home.executions_log.read_bytes().decode("utf-8")
    [record] = ExecutionLog(kavi_home.executions_log).read_all()
    assert record.skill_name == "write_note" and record.refusal == "SCHEMA"
    assert record.input_data()["note"] == "\ud800"


def test_refusals_are_records_without_host_paths(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "word_count")
    trust_example(kavi_home, "slugify_title")
    trust_example(kavi_home, "write_note")
    server = SkillToolServer(kavi_home, _runner)
    not_served = server.call("write_note", {"path": "x.md", "content": "hi"}, CALLER)
    assert not_served.isError and "--allow FILE_WRITE" in _text(not_served)
    records = ForgeRecords(Ledger(kavi_home.ledger_path))
    records.revoke_version("slugify_title", 1, reason="wrong slugs", actor="ada")
    revoked = server.call("slugify_title", {"title": "Hi"}, CALLER)
    assert revoked.isError and "REVOKED" in _text(revoked)
    path = kavi_home.root / records.trusted_version("word_count", 1).skill_path  # type: ignore[union-attr]
    path.write_text(path.read_text() + "\n# tampered\n")
    tampered = server.call("word_count", {"text": "a"}, CALLER)
    assert tampered.isError and "hash mismatch" in _text(tampered)
    assert str(path.relative_to(kavi_home.root)) in _text(tampered)
    for result in (not_served, revoked, tampered):
        assert str(kavi_home.root) not in _text(result) and "Traceback" not in _text(result)
        assert "(execution " in _text(result)
    logged = ExecutionLog(kavi_home.executions_log).read_all()
    assert [(r.skill_name, r.skill_version, r.refusal, r.caller) for r in logged] == [
        ("write_note", 1, "CLASS_NOT_ALLOWED", CALLER), ("slugify_title", 1, "REVOKED", CALLER),
        ("word_count", 1, "TAMPERED", CALLER)]
    assert _files(kavi_home) == []
