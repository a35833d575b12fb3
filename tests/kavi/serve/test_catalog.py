"""The tools a home serves: annotations per side-effect class, READ_ONLY only by default, pinned versions, the
list-changed detection after a promotion, `kavi tools` in its three formats, and the loopback rule."""

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.serve.catalog import SEARCH_TOOL, ServePolicy, tool_ref
from kavi.serve.server import BindRefused, SkillToolServer, caller_of, check_bind
from kavi.skills.base import SideEffectClass
from kavi_assets.cli.main import app
from kavi_assets.cli.runtime_cmd import _runner
from tests.factories import example_source, example_spec, trust_example, trust_version

ALL = ServePolicy(frozenset(SideEffectClass))


def _server(home: KaviHome, policy: ServePolicy | None = None) -> SkillToolServer:
    return SkillToolServer(home, _runner, policy)


def test_annotations_follow_the_side_effect_class(kavi_home: KaviHome) -> None:
    for name in ("word_count", "write_note", "http_get_json"):
        trust_example(kavi_home, name)
    tools = {t.name: t for t in _server(kavi_home, ALL).tools()}
    assert set(tools) == {"word_count", "write_note", "http_get_json", SEARCH_TOOL}
    ro, fw, net = tools["word_count"].annotations, tools["write_note"].annotations, tools["http_get_json"].annotations
    assert ro is not None and fw is not None and net is not None
    assert (ro.readOnlyHint, ro.destructiveHint, ro.openWorldHint) == (True, False, False)
    assert (fw.readOnlyHint, fw.destructiveHint) == (False, True)
    assert (net.readOnlyHint, net.openWorldHint) == (False, True)
    meta = tools["http_get_json"].meta
    assert meta is not None and meta["kavi/side_effect_class"] == "NETWORK"


def test_only_read_only_by_default_and_opt_in_per_class_or_skill(kavi_home: KaviHome) -> None:
    for name in ("word_count", "write_note", "http_get_json"):
        trust_example(kavi_home, name)
    default = _server(kavi_home)
    assert {t.name for t in default.tools()} == {"word_count", SEARCH_TOOL}
    assert "--allow NETWORK" in default.catalog.withheld["http_get_json"]
    refused = default.call("http_get_json", {"url": "http://example.invalid/"}, "mcp:t/1")
    assert refused.isError and "not served" in refused.content[0].text  # type: ignore[union-attr]
    one = _server(kavi_home, ServePolicy(allow_skills=frozenset({"write_note"})))
    assert {t.name for t in one.tools()} == {"word_count", "write_note", SEARCH_TOOL}
    by_class = _server(kavi_home, ServePolicy(frozenset({SideEffectClass.READ_ONLY, SideEffectClass.NETWORK})))
    assert {t.name for t in by_class.tools()} == {"word_count", "http_get_json", SEARCH_TOOL}


def test_promotion_changes_the_list_once_and_pins_earlier_versions(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "word_count")
    server = _server(kavi_home)
    assert server.refresh() is False  # the first read is not a change
    assert server.refresh() is False  # nothing moved: no ledger read either
    reads = server.refreshes
    assert server.refresh() is False and server.refreshes == reads
    source = example_source("word_count").replace('description = "Count the words, lines and characters of a text."',
                                                  'description = "Count words, lines and characters (second)."')
    trust_version(kavi_home, example_spec("word_count"), source)
    assert server.refresh() is True
    assert server.refresh() is False
    tools = {t.name: t for t in server.tools()}
    assert {"word_count", "word_count__v1"} <= set(tools)
    assert tools["word_count"].meta["kavi/version"] == 2  # type: ignore[index]
    assert tools["word_count__v1"].meta["kavi/version"] == 1  # type: ignore[index]
    pinned = server.call("word_count__v1", {"text": "x y"}, "mcp:t/1")
    assert not pinned.isError and pinned.meta is not None and pinned.meta["kavi/ref"] == "word_count@1"
    also = server.call("word_count__v2", {"text": "x y"}, "mcp:t/1")  # the current version, pinned
    assert not also.isError and also.meta is not None and also.meta["kavi/ref"] == "word_count@2"
    missing = server.call("word_count__v9", {"text": "x"}, "mcp:t/1")
    assert missing.isError and "not trusted" in missing.content[0].text  # type: ignore[union-attr]


def test_tool_names_are_checked_before_they_reach_the_runtime() -> None:
    assert tool_ref("word_count") == "word_count"
    assert tool_ref("word_count__v12") == "word_count@12"
    for bad in ("../x", "Word", "a__v0", "a@1", "", "x" * 65, "a b", "a__v1__v2"):
        assert tool_ref(bad) is None, bad


def test_arguments_are_bounded_like_kavi_run(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "word_count")
    server = _server(kavi_home)
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    result = server.call("word_count", {"text": deep}, "mcp:t/1")
    assert result.isError and "refused" in result.content[0].text  # type: ignore[union-attr]
    not_object = server.call("word_count", ["a"], "mcp:t/1")
    assert not_object.isError


def test_caller_is_printable_and_bounded() -> None:
    class Info:
        name = "agent\x1b[31m" + "x" * 500
        version = "1\n2"

    class Params:
        clientInfo = Info()

    class Session:
        client_params = Params()

    caller = caller_of(Session())
    assert caller.startswith("mcp:agent[31m") and "\x1b" not in caller and "\n" not in caller
    assert len(caller) <= 4 + 80 + 1 + 80
    assert caller_of(object()) == "mcp:unknown"


def test_kavi_tools_formats(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "word_count")
    runner = CliRunner()
    docs = {}
    for fmt in ("openai", "anthropic", "mcp"):
        result = runner.invoke(app, ["tools", "--format", fmt])
        assert result.exit_code == 0, result.output
        docs[fmt] = json.loads(result.stdout)
    openai = {t["function"]["name"]: t for t in docs["openai"]}
    assert openai["word_count"]["type"] == "function"
    assert openai["word_count"]["function"]["parameters"]["properties"]["text"]["type"] == "string"
    anthropic = {t["name"]: t for t in docs["anthropic"]}
    assert anthropic["word_count"]["input_schema"]["required"] == ["text"]
    assert set(anthropic) == set(openai) == {"word_count", SEARCH_TOOL}
    mcp = {t["name"]: t for t in docs["mcp"]}
    assert mcp["word_count"]["annotations"]["readOnlyHint"] is True
    assert mcp["word_count"]["_meta"]["kavi/version"] == 1
    short = runner.invoke(app, ["tools", "--short"])
    assert short.exit_code == 0 and "word_count  READ_ONLY  v1" in short.stdout
    bad = runner.invoke(app, ["tools", "--format", "yaml"])
    assert bad.exit_code == 2 and "--format" in bad.stderr


def test_non_loopback_bind_is_refused_without_the_flag(kavi_home: KaviHome) -> None:
    check_bind("127.0.0.1", False)
    check_bind("::1", False)
    check_bind("localhost", False)
    with pytest.raises(BindRefused):
        check_bind("0.0.0.0", False)
    with pytest.raises(BindRefused):
        check_bind("example.com", True)
    check_bind("0.0.0.0", True)
    result = CliRunner().invoke(app, ["serve", "--http", "--host", "0.0.0.0", "--port", "8999"])
    assert result.exit_code == 2 and "--allow-remote" in result.stderr
    bad_class = CliRunner().invoke(app, ["tools", "--allow", "EVERYTHING"])
    assert bad_class.exit_code == 2 and "not a side-effect class" in bad_class.stderr


def test_search_skills_tool_names_the_tool_to_call(kavi_home: KaviHome) -> None:
    for name in ("word_count", "write_note"):
        trust_example(kavi_home, name)
    server = _server(kavi_home)
    found = server.call(SEARCH_TOOL, {"query": "how many words does this text have", "limit": 3}, "mcp:t/1")
    assert not found.isError and found.structuredContent is not None
    # The same search as `kavi search`: by meaning and words with the packaged model where it runs.
    from kavi.search import packaged

    wanted = "bm25" if packaged.unavailable() else "bm25+vector"
    assert found.structuredContent["mode"] == wanted and found.structuredContent["ranking"].startswith("BM25")
    top = found.structuredContent["results"][0]
    assert top["name"] == "word_count" and top["tool"] == "word_count" and 0 < top["score"] <= 1
    note = server.call(SEARCH_TOOL, {"query": "write a markdown note"}, "mcp:t/1")
    hit = next(r for r in note.structuredContent["results"] if r["name"] == "write_note")  # type: ignore[index]
    assert hit["tool"] is None  # trusted, but FILE_WRITE is not served here: nothing to call
    for bad in ({}, {"query": 3}, {"query": "x", "limit": "many"}, {"query": "x" * 1001}, {"query": "  "}):
        assert server.call(SEARCH_TOOL, bad, "mcp:t/1").isError, bad


def test_field_types_become_json_schema_for_agents() -> None:
    """A trusted artifact without a pydantic model (a composition) is described from the FieldSpec grammar."""
    from kavi.proposals.values import fields_json_schema, type_json_schema

    assert type_json_schema("str") == {"type": "string"}
    assert type_json_schema("list[int]") == {"type": "array", "items": {"type": "integer"}}
    assert type_json_schema("dict[str, float]") == {"type": "object", "additionalProperties": {"type": "number"}}
    assert type_json_schema("bool | None") == {"anyOf": [{"type": "boolean"}, {"type": "null"}]}
    assert type_json_schema("json") == {}
    with pytest.raises(ValueError, match="unsupported field type"):
        type_json_schema("list[list[str]]")
    schema = fields_json_schema([{"name": "text", "type": "str", "description": "free text"},
                                 {"name": "limit", "type": "int | None"},
                                 {"name": "tags", "type": "list[str]", "required": False}])
    assert schema["required"] == ["text"] and schema["additionalProperties"] is False
    assert schema["properties"]["text"] == {"type": "string", "description": "free text"}
