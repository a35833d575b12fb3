"""What a person reads from the CLI: tables that fit a 100-column terminal, verdicts without tracebacks, one exit
status rule, no Dagster log lines, and `kavi --version`."""

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

import kavi_assets
from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.forge.promote import approve, promote
from kavi.home import KaviHome
from kavi.lifecycle import FailureKind, ProposalStatus, Verdict
from kavi.proposals.model import load_proposal, parse_proposal
from kavi.verdicts import ALL_GATES, GateResult
from kavi_assets.cli import demo_cmd, retry_sensor
from kavi_assets.cli.main import app
from tests.factories import REPO

EXAMPLES = REPO / "kavi" / "examples" / "proposals"
runner = CliRunner()


def _no_llm() -> Any:
    raise AssertionError("no model here")


def _attempts(ctx: ForgeContext, name: str, attempts: list[tuple[str, str | None]], *, trust: bool) -> None:
    """Record attempts (model, failure kind or None for a verified build) and, with `trust`, promote the last."""
    for n, (model, kind) in enumerate(attempts, start=1):
        packet = ctx.store.put(f"packet {name} {n}".encode(), "build_packet")
        skill = ctx.store.put(f"# {name} {n}\n".encode(), "skill_source")
        build_id = f"{name}-a{n}-tidy"
        ctx.records.start_build(name, run_id=None, model=model, endpoint="e", packet=packet, build_id=build_id,
                                attempt=n, parent_build_id=None, lineage_parent="0" * 64)
        ctx.records.finish_build(build_id, status="VERIFIED" if kind is None else "VERIFY_FAILED", failure_kind=kind,
                                 skill_sha256=skill.sha256 if kind is None else None)
        verdict = Verdict.PASSED if kind is None else Verdict.FAILED
        ctx.records.record_gate_results(build_id, [GateResult(g, verdict, "ok", 0.1) for g in ALL_GATES])
        if kind is not None:
            ctx.records.set_status(name, ProposalStatus(kind if kind == "GATE_VIOLATION" else "FAILED"),
                                   build_id=build_id, reason=kind)
    if trust:
        approve(ctx, name, "tester")
        assert promote(ctx, name).promoted


def _home_like_the_demo(home: KaviHome) -> tuple[ForgeContext, list[str]]:
    """The demo's ten proposals with the widest cells it prints: two attempts with two models and a failure,
    a GATE_VIOLATION, every side-effect class."""
    ctx = ForgeContext.open(home, _no_llm)
    with ctx.records.session():  # one transaction, as a forge step writes: the same rows, far fewer connections
        names = _record_like_the_demo(ctx)
    return ctx, names


def _record_like_the_demo(ctx: ForgeContext) -> list[str]:
    names = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        prop = load_proposal(path)
        intake(ctx, prop, str(path), actor="test")
        names.append(prop.name)
    # The demo's decomposition children are proposals too, and the longest names the summary prints.
    decomposition = json.loads((EXAMPLES.parent / "answers" / "email_domain_report" / "decomposition.json")
                               .read_text(encoding="utf-8"))
    for child in decomposition["children"]:
        intake(ctx, parse_proposal(child), None, actor="test")
        names.append(child["name"])
    a, b = "recorded-coder-a", "recorded-coder-b"
    plan: dict[str, list[tuple[str, str | None]]] = {
        "extract_emails": [(a, "GATE_VIOLATION")],
        "parse_duration": [(b, "LLM_BAD_OUTPUT"), (b, "VERIFY_RESOURCE"), (a, None)],
        "find_addresses": [(a, "VERIFY_RESOURCE"), (a, None)],
        "slugify_title": [(a, "VERIFY_LINT"), (b, None)],
        "word_count": [(b, "VERIFY_ACCEPTANCE"), (b, None)],
        "read_notes_by_tag": [(b, "COACH_CHANGES_REQUESTED"), (a, None)],
    }
    for name in names:
        attempts = plan.get(name, [(a, None)])
        _attempts(ctx, name, attempts, trust=attempts[-1][1] is None)
    return names


@pytest.fixture(scope="module")
def demo_like(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ForgeContext, list[str]]]:
    """One home like the demo's (_home_like_the_demo) for the tests that only read it: building it is most of their
    time."""
    root = tmp_path_factory.mktemp("demo-like")
    with pytest.MonkeyPatch.context() as mp:
        home = KaviHome(root / "home").ensure()
        mp.setenv("KAVI_HOME", str(home.root))
        mp.setenv("DAGSTER_HOME", str(root / "dagster"))
        mp.setenv("KAVI_RECORDED_SPEED", "0")
        (root / "dagster").mkdir()
        yield _home_like_the_demo(home)


def test_demo_summary_fits_a_100_column_terminal(demo_like: tuple[ForgeContext, list[str]]) -> None:
    ctx, names = demo_like
    out = io.StringIO()
    demo_cmd.print_summary(ctx, names, Console(file=out, width=100, force_terminal=False, color_system=None))
    text = out.getvalue()
    lines = text.splitlines()
    assert all(len(line) <= 100 for line in lines), text
    assert "…" not in text, text  # rich marks a cut cell with an ellipsis
    trusted = {t.name: t for t in ctx.records.trusted()}
    for name in names:
        row = ctx.records.require_proposal(name)
        (line,) = [ln for ln in lines if f" {name} " in ln]  # the row's first line names the skill, whole
        assert row.status.value in line and row.proposal.side_effect_class.value in line, line
        if name in trusted:
            assert trusted[name].source_sha256[:12] in line, line
        for b in ctx.records.builds(name):  # every attempt's model and failure kind, whole, on some line
            assert re.search(rf"\ba{b.attempt_number} {re.escape(str(b.model))}\b", text), (name, text)
            if b.failure_kind:
                assert re.search(rf"\b{b.failure_kind}\b", text), (name, text)


def test_demo_closing_lines_name_each_command_on_its_own_line(tmp_path: Path) -> None:
    text = "\n".join(demo_cmd.closing_lines(tmp_path / "h", tmp_path / "d"))
    assert " | " not in text  # "a | b" read like a shell pipe
    assert re.search(r"^\s+kavi status --home \S+$", text, re.M), text
    assert re.search(r"^\s+kavi lineage slugify_title --home \S+$", text, re.M), text


def test_demo_retry_sensor_evaluation_prints_no_dagster_log_lines(
        kavi_home: KaviHome, proposal_data: dict[str, Any], capfd: pytest.CaptureFixture[str]) -> None:
    from resources.gates import GateRunnerResource
    from resources.home import SkillsHomeResource

    ctx = ForgeContext.open(kavi_home, _no_llm)
    ctx.records.register_proposal(parse_proposal(proposal_data), source_path=None, complexity=0.1)
    packet = ctx.store.put(b"p", "build_packet")
    ctx.records.start_build("word_count", run_id=None, model="m", endpoint="e", packet=packet, build_id="wc-a1",
                            attempt=1, parent_build_id=None, lineage_parent="0" * 64)
    note = ctx.store.put(b"n", "research_note")
    ctx.records.record_research(build_id="wc-a1", name="word_count", attempt=1,
                                failure_kind=FailureKind.VERIFY_POLICY.value, fingerprint="f", facts={},
                                triggers=["SECURITY_CLASS"], advice=None, escalated=True, note=note,
                                lineage_parent=None)
    ctx.records.set_status("word_count", ProposalStatus.ESCALATED, build_id="wc-a1", reason="test")
    requests, _ = retry_sensor.retry_requests(SkillsHomeResource(root=str(kavi_home.root)), GateRunnerResource(), None)
    assert requests == []
    captured = capfd.readouterr()
    assert " - dagster - " not in captured.out + captured.err, captured


def _trust_word_count(home: KaviHome, name: str, description: str) -> None:
    """Promote the shipped word_count answer under `name` with `description`, as the forge would after its gates."""
    ctx = ForgeContext.open(home, _no_llm)
    source = (REPO / "kavi" / "examples" / "answers" / "word_count" / "1" / "skill.py")
    ctx.records.register_proposal(parse_proposal({
        "name": name, "description": description, "inputs": [{"name": "text", "type": "str"}],
        "outputs": [{"name": "words", "type": "int"}, {"name": "lines", "type": "int"},
                    {"name": "characters", "type": "int"}],
        "side_effect_class": "READ_ONLY", "examples": [{"input": {"text": "a"}, "expected": {"words": 1}}]}),
        source_path=None, complexity=0.1)
    text = (source.read_text().replace('"Count the words, lines and characters of a text."', repr(description))
            .replace('name = "word_count"', f'name = "{name}"'))
    assert description in text
    packet = ctx.store.put(f"packet {name}".encode(), "build_packet")
    skill = ctx.store.put(text.encode(), "skill_source")
    build_id = f"{name}-a1"
    ctx.records.start_build(name, run_id=None, model="m", endpoint="e", packet=packet, build_id=build_id,
                            attempt=1, parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build(build_id, status="VERIFIED", failure_kind=None, skill_sha256=skill.sha256)
    ctx.records.record_gate_results(build_id, [GateResult(g, Verdict.PASSED, "ok", 0.1) for g in ALL_GATES])
    approve(ctx, name, "tester")
    assert promote(ctx, name).promoted


LONG_DESCRIPTION = ("Count the words, lines and characters of a text; words are split on whitespace, so punctuation "
                    "stays attached to its word.")
LONG_NAME = "count_words_lines_and_characters"


@pytest.fixture()
def trusted_home(kavi_home: KaviHome) -> KaviHome:
    _trust_word_count(kavi_home, "word_count", LONG_DESCRIPTION)
    return kavi_home


def test_skills_shows_outputs_and_whole_words(trusted_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    _trust_word_count(trusted_home, LONG_NAME, "Count the words of a text.")
    monkeypatch.setenv("COLUMNS", "100")
    res = runner.invoke(app, ["skills"])
    assert res.exit_code == 0, res.output
    assert "outputs" in res.output and "characters" in res.output and "lines" in res.output, res.output
    assert "…" not in res.output and all(len(line) <= 100 for line in res.output.splitlines()), res.output
    assert f" {LONG_NAME} " in res.output and " word_count " in res.output, res.output
    words = re.findall(r"[A-Za-z]+", " ".join(
        cell for line in res.output.splitlines() for cell in line.split("│")[-2:-1]))
    for word in ("punctuation", "attached", "whitespace", "characters"):
        assert word in words, res.output  # wrapped between words, never cut inside one


def test_run_input_validation_is_a_usage_error(trusted_home: KaviHome) -> None:
    res = runner.invoke(app, ["run", "word_count", "--json", '{"txt": 1}'])
    assert res.exit_code == 2, res.output
    assert res.stdout == "" and "text" in res.stderr and "error" in res.stderr, (res.stdout, res.stderr)
    assert "Traceback" not in res.output
    res = runner.invoke(app, ["run", "word_count", "--json", "[1]"])
    assert res.exit_code == 2 and res.stdout == "", res.output
    ok = runner.invoke(app, ["run", "word_count", "--json", '{"text": "a b"}'])
    assert ok.exit_code == 0, ok.output


def test_version_and_the_exit_status_rule_in_help() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"kavi {kavi_assets.__version__}", res.output
    helptext = " ".join(runner.invoke(app, ["--help"]).output.split())
    assert "Exit status" in helptext and "0 " in helptext
    for needle in ("FAILED, ESCALATED or GATE_VIOLATION", "usage error", "stderr"):
        assert needle in helptext, helptext


@pytest.mark.parametrize(("name", "status", "gate_line"), [
    ("slugify_title", "FAILED (VERIFY_LINT)", "ruff"),
    ("extract_emails", "GATE_VIOLATION", "allowlist"),
])
def test_forge_verdict_is_a_line_not_a_traceback(kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch,
                                                 name: str, status: str, gate_line: str) -> None:
    monkeypatch.delenv("KAVI_LLM_BASE_URL", raising=False)
    assert runner.invoke(app, ["propose", str(EXAMPLES / f"{name}.yaml")]).exit_code == 0
    res = runner.invoke(app, ["forge", name])
    assert res.exit_code == 1, res.output  # a verdict against the attempt: non-zero, as scripts expect
    for bad in ("Traceback", "DagsterAssetCheckFailedError", " - dagster - ", f"{status} ({status})"):
        assert bad not in res.output, res.output
    lines = res.stdout.splitlines()
    assert re.match(rf"{name}: attempt 1 \(recorded-coder-[ab]\) → {re.escape(status)}  run \w{{8}}$", lines[0]), lines
    assert any(line.strip().startswith(gate_line) for line in lines[1:]), lines
    note = [line for line in lines if line.strip().startswith("research note: ")]
    assert note and Path(note[0].split("research note: ", 1)[1].split()[0]).is_file(), lines


def test_forge_json_exits_as_the_verdict_says(kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    """--json changes what is printed, not the exit status: 1 for a verdict against the attempt, as without it."""
    monkeypatch.delenv("KAVI_LLM_BASE_URL", raising=False)
    assert runner.invoke(app, ["propose", str(EXAMPLES / "extract_emails.yaml")]).exit_code == 0
    res = runner.invoke(app, ["forge", "extract_emails", "--json"])
    doc = json.loads(res.stdout[res.stdout.index("{"):])
    assert doc["status"] == "GATE_VIOLATION" and res.exit_code == 1, res.output
    helptext = " ".join(runner.invoke(app, ["forge", "--help"]).output.split())
    assert "same status as without --json" in " ".join(runner.invoke(app, ["--help"]).output.split())
    assert "--json" in helptext


def test_readme_shows_what_the_cli_prints(demo_like: tuple[ForgeContext, list[str]]) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ctx, names = demo_like
    out = io.StringIO()
    demo_cmd.print_summary(ctx, names, Console(file=out, width=100, force_terminal=False, color_system=None))
    header = next(line for line in out.getvalue().splitlines() if "skill" in line and "attempts" in line)
    assert header.rstrip() in readme  # the demo summary's columns, as printed
    assert "`kavi --version`" in readme and "**Exit status**" in readme
    assert "FAILED, ESCALATED or GATE_VIOLATION" in readme
    assert readme.count("LLM_NOT_CONFIGURED") >= 3  # intake, `dagster asset materialize`, the client's retries


def test_retry_by_a_person_follows_the_same_verdict_rule(kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAVI_LLM_BASE_URL", raising=False)
    assert runner.invoke(app, ["propose", str(EXAMPLES / "extract_emails.yaml")]).exit_code == 0
    res = runner.invoke(app, ["retry", "extract_emails", "--by", "tester", "--hint", "stay inside skills/"])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and "GATE_VIOLATION (GATE_VIOLATION)" not in res.output, res.output
    assert re.match(r"extract_emails: attempt 1 \(recorded-coder-[ab]\) → GATE_VIOLATION  run \w{8}$",
                    res.stdout.splitlines()[0]), res.stdout
    assert "escalated (SECURITY_CLASS)" in res.stdout and "kavi retry extract_emails --by YOU" in res.stdout
