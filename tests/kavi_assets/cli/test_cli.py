"""The `kavi` CLI as a user runs it: clear errors without tracebacks; run, tail, session, replay, verify, doctor."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kavi.forge.context import ForgeContext
from kavi.forge.promote import approve, promote
from kavi.home import KaviHome
from kavi.lifecycle import Verdict
from kavi.proposals.model import parse_proposal
from kavi.verdicts import ALL_GATES, GateResult
from kavi_assets.cli.main import app
from tests.factories import REPO

ANSWERS = REPO / "kavi" / "examples" / "answers"

NOTE_SKILL = '''"""Write a note."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class SaveNoteInput(BaseModel):
    path: str
    text: str


class SaveNoteOutput(BaseModel):
    path: str


class SaveNote(BaseSkill[SaveNoteInput, SaveNoteOutput]):
    name = "save_note"
    description = "Write a note into the vault."
    input_model = SaveNoteInput
    output_model = SaveNoteOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: SaveNoteInput) -> SaveNoteOutput:
        return SaveNoteOutput(path=self.vault.write_text(input_data.path, input_data.text))
'''

runner = CliRunner()


def _no_llm() -> Any:
    raise AssertionError("no model here")


def _trust(home: KaviHome, name: str, source: str, side_effect: str, fields: tuple[list[dict[str, str]],
           list[dict[str, str]]], example: dict[str, Any]) -> None:
    """Record a verified build of `source` and promote it, as the forge would after passing gates."""
    ctx = ForgeContext.open(home, _no_llm)
    ctx.records.register_proposal(parse_proposal({
        "name": name, "description": f"The {name} skill for CLI tests.", "inputs": fields[0], "outputs": fields[1],
        "side_effect_class": side_effect, "examples": [example]}), source_path=None, complexity=0.1)
    packet = ctx.store.put(f"packet {name}".encode(), "build_packet")
    skill = ctx.store.put(source.encode(), "skill_source")
    build_id = f"{name}-a1-cli"
    ctx.records.start_build(name, run_id=None, model="m", endpoint="e", packet=packet, build_id=build_id, attempt=1,
                            parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build(build_id, status="VERIFIED", failure_kind=None, skill_sha256=skill.sha256)
    ctx.records.record_gate_results(build_id, [GateResult(g, Verdict.PASSED, "ok", 0.1) for g in ALL_GATES])
    approve(ctx, name, "tester")
    assert promote(ctx, name).promoted


@pytest.fixture()
def trusted_home(kavi_home: KaviHome) -> KaviHome:
    _trust(kavi_home, "word_count", (ANSWERS / "word_count" / "1" / "skill.py").read_text(), "READ_ONLY",
           ([{"name": "text", "type": "str"}], [{"name": "words", "type": "int"}, {"name": "lines", "type": "int"},
                                                 {"name": "characters", "type": "int"}]),
           {"input": {"text": "a"}, "expected": {"words": 1}})
    _trust(kavi_home, "save_note", NOTE_SKILL, "FILE_WRITE",
           ([{"name": "path", "type": "str"}, {"name": "text", "type": "str"}], [{"name": "path", "type": "str"}]),
           {"input": {"path": "a.md", "text": "x"}, "expected": {"path": "a.md"}})
    return kavi_home


def _no_traceback(out: str) -> None:
    assert "Traceback" not in out


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("name: Bad Name\n", "snake_case"),
        ("name: [unclosed\n", "malformed YAML"),
        ("- a list\n", "must be a mapping"),
    ],
)
def test_propose_rejects_invalid_files_cleanly(kavi_home: KaviHome, tmp_path: Path, content: str, needle: str) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(content)
    res = runner.invoke(app, ["propose", str(f)])
    assert res.exit_code == 2
    assert needle in res.output
    _no_traceback(res.output)


def test_propose_unknown_class_and_missing_fields(kavi_home: KaviHome, tmp_path: Path,
                                                  proposal_data: dict[str, Any]) -> None:
    proposal_data["side_effect_class"] = "GOD_MODE"
    del proposal_data["outputs"]
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(proposal_data))
    res = runner.invoke(app, ["propose", str(f)])
    assert res.exit_code == 2 and "side_effect_class" in res.output and "outputs: Field required" in res.output
    _no_traceback(res.output)


def test_propose_then_status(kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(proposal_data))
    assert runner.invoke(app, ["propose", str(f)]).exit_code == 0
    res = runner.invoke(app, ["status", "--json"])
    assert res.exit_code == 0
    assert json.loads(res.output)[0]["status"] == "PROPOSED"
    res = runner.invoke(app, ["lineage", "nope"])
    assert res.exit_code == 2 and "no proposal named 'nope'" in res.output


def test_run_tail_session_replay(trusted_home: KaviHome) -> None:
    res = runner.invoke(app, ["run", "word_count", "--json", '{"text": "a b c"}', "--output-json"])
    assert res.exit_code == 0, res.output
    record = json.loads(res.output)
    assert record["success"] and record["output"]["words"] == 3
    res = runner.invoke(app, ["run", "word_count", "--json", '{"txt": 1}'])
    assert res.exit_code == 2 and "text" in res.stderr  # schema rejection: a usage error naming the field
    tail = runner.invoke(app, ["tail", "--json"])
    rows = json.loads(tail.output)
    assert len(rows) == 2
    short = record["execution_id"][:8]
    replay = runner.invoke(app, ["replay", short])
    assert replay.exit_code == 0, replay.output
    assert "replay of" in replay.output
    session = runner.invoke(app, ["session", "--latest", "--json"])
    assert session.exit_code == 0 and "word_count" in session.output


def test_side_effects_need_confirmation(trusted_home: KaviHome) -> None:
    args = ["run", "save_note", "--json", '{"path": "n/a.md", "text": "hi"}']
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "--yes" in res.output
    assert not (trusted_home.vault_dir / "n" / "a.md").exists()
    res = runner.invoke(app, [*args, "--yes"])
    assert res.exit_code == 0, res.output
    assert (trusted_home.vault_dir / "n" / "a.md").read_text() == "hi"
    res = runner.invoke(app, ["run", "save_note", "--yes", "--json", '{"path": "../escape.md", "text": "x"}'])
    assert res.exit_code == 1 and "VaultPathError" in res.output


def test_tampered_skill_refused_and_replay_refused(trusted_home: KaviHome) -> None:
    res = runner.invoke(app, ["run", "word_count", "--json", '{"text": "a"}', "--output-json"])
    first = json.loads(res.output)["execution_id"]
    path = trusted_home.skill_version_file("word_count", 1)
    path.chmod(0o644)
    path.write_text(path.read_text() + "\nopen('marker', 'w')\n")
    res = runner.invoke(app, ["run", "word_count", "--json", '{"text": "a"}'])
    assert res.exit_code == 2 and "hash" in res.output.lower()
    _no_traceback(res.output)
    assert not Path("marker").exists()
    verify = runner.invoke(app, ["verify"])
    assert verify.exit_code == 1 and "changed since promotion" in verify.output
    replay = runner.invoke(app, ["replay", first])
    assert replay.exit_code == 2


def test_verify_and_doctor_on_a_healthy_home(trusted_home: KaviHome) -> None:
    # The fixture promoted without the registry projection catching up: verify says so and writes nothing (it used
    # to regenerate the file); the projection is written by the refresh sensor, or here explicitly.
    res = runner.invoke(app, ["verify"])
    assert res.exit_code == 0 and "kavi registry rebuild" in res.output and not trusted_home.registry_path.exists()
    assert runner.invoke(app, ["registry", "rebuild"]).exit_code == 0
    res = runner.invoke(app, ["verify"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(res.output)}
    assert res.exit_code == 0, checks
    assert checks["ledger"]["status"] == "ok"
    assert checks["registry and trusted files"]["status"] == "ok"
    assert checks["gate tool ruff"]["status"] == "ok"


def test_doctor_on_a_broken_home(trusted_home: KaviHome) -> None:
    path = trusted_home.skill_version_file("word_count", 1)
    path.chmod(0o644)
    path.write_text("# tampered\n")
    trusted_home.executions_log.write_text("not json\n")
    res = runner.invoke(app, ["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(res.output)}
    assert res.exit_code == 1
    assert checks["registry and trusted files"]["status"] == "fail" and checks["registry and trusted files"]["fix"]
    assert checks["execution log"]["status"] == "warn"


def test_long_status_listings_stay_complete(kavi_home: KaviHome, proposal_data: dict[str, Any],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Past a hundred rows the JSON is one object per line (C encoder) and past the rich-table limit the table is
    plain aligned text: the same rows, every one of them."""
    from kavi_assets.cli import lifecycle_cmd

    ctx = ForgeContext.open(kavi_home, lambda: None)
    names = [f"skill_{i:03d}" for i in range(120)]
    with ctx.records.session():
        for name in names:
            ctx.records.register_proposal(parse_proposal({**proposal_data, "name": name}), source_path=None,
                                            complexity=0.1)
    res = runner.invoke(app, ["status", "--json"])
    assert res.exit_code == 0
    assert json.loads(res.output) == json.loads(json.dumps(
        [{**r, "ceremony": "low", "parent": None, "children": []} for r in ctx.records.list_status()]))
    monkeypatch.setattr(lifecycle_cmd, "_RICH_TABLE_MAX_ROWS", 50)
    res = runner.invoke(app, ["status"])
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert lines[0].endswith(": 120 proposals") and lines[1].split() == [
        "skill", "class", "status", "version", "ceremony", "attempts", "latest", "model", "failure", "parent"]
    assert [line.split()[:5] for line in lines[2:]] == [[n, "READ_ONLY", "PROPOSED", "low", "0"] for n in names]


def test_status_shows_versions_levels_and_decompositions_whole_at_100_columns(
        kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 32-character name is never cut at 100 columns; each row shows the trusted version, the ceremony level
    (a person's raise included), the latest attempt with its failure kind, and a decomposition's parent and
    children; --json carries the same fields."""
    from kavi.decompose.records import WAITING, DecompositionRecords
    from kavi.forge.levels import set_level
    from tests.factories import SIGN_OF_SPEC, forge_ctx, record_build, sign_of_source, trust_version

    long_name = "domains_of_addresses_in_a_letter"
    assert len(long_name) == 32
    trust_version(kavi_home, {**SIGN_OF_SPEC, "name": long_name}, sign_of_source())
    trust_version(kavi_home, {**SIGN_OF_SPEC, "name": long_name}, sign_of_source("(n > 0) - (n < 0)"))
    record_build(kavi_home, {**SIGN_OF_SPEC, "name": "parent_report"}, sign_of_source())
    record_build(kavi_home, {**SIGN_OF_SPEC, "name": "child_part"}, sign_of_source())
    ctx = forge_ctx(kavi_home)
    set_level(ctx.records, "parent_report", "strict", actor="ada")
    DecompositionRecords(ctx.records).record(
        parent="parent_report", spec_sha256="0" * 64, root="parent_report", depth=0, trigger="test", model=None,
        endpoint=None, status=WAITING, reason=None, composition=None, answer_sha256=None,
        children=["child_part", long_name])
    monkeypatch.setenv("COLUMNS", "100")
    res = runner.invoke(app, ["status", "--home", str(kavi_home.root)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert all(len(line) <= 100 for line in lines), res.output
    assert "…" not in res.output, res.output
    row = next(line for line in lines if line.startswith(long_name + " "))
    assert row.split()[1:5] == ["READ_ONLY", "TRUSTED", "2", "low"], row
    assert "a2 builder-m" in row
    parent = lines.index(next(line for line in lines if line.startswith("parent_report ")))
    assert lines[parent].split()[1:4] == ["READ_ONLY", "PROPOSED", "strict"], lines[parent]
    assert lines[parent + 1].startswith("→ child_part, ")  # the children below the name (wrapped to its width)
    assert long_name in " ".join(lines[parent + 1: parent + 3]).replace("\n", "")
    child = lines.index(next(line for line in lines if line.startswith("child_part ")))
    assert lines[child + 1].startswith("↳ part of parent_report")
    doc = {r["name"]: r for r in json.loads(runner.invoke(app, ["status", "--json", "--home",
                                                                str(kavi_home.root)]).output)}
    assert doc[long_name]["trusted_version"] == 2 and doc[long_name]["ceremony"] == "low"
    assert doc["parent_report"]["ceremony"] == "strict"
    assert doc["parent_report"]["children"] == ["child_part", long_name] and doc["parent_report"]["parent"] is None
    assert doc["child_part"]["parent"] == "parent_report" and doc[long_name]["parent"] == "parent_report"
