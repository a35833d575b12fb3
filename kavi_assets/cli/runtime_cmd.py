"""Runtime commands: list, run, chain, replay, tail, session, verify and doctor."""

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors
from kavi_assets.home import KaviHome

console = make_console()
HomeOpt = Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="confirm side effects (FILE_WRITE, NETWORK, SECRET_READ)")]


def _home(home: str | None) -> KaviHome:
    return KaviHome.from_env(home).ensure()


def _records(h: KaviHome) -> Any:
    from kavi_assets.ledger.records import ForgeRecords
    from kavi_assets.ledger.store import Ledger

    return ForgeRecords(Ledger(h.ledger_path))


def _trusted_map(h: KaviHome) -> dict[str, Any]:
    from kavi_assets.runtime.trust import TrustedSkill

    return {
        t.name: TrustedSkill(t.name, h.root / t.skill_path, t.source_sha256, t.side_effect_class, t.required_secrets)
        for t in _records(h).trusted()
    }


def _runner(h: KaviHome, *, fsync: bool = True) -> tuple[Any, Any, dict[str, Any]]:
    from kavi_assets.runtime.executor import SkillRunner
    from kavi_assets.runtime.records import ExecutionLog

    trusted = _trusted_map(h)
    log = ExecutionLog(h.executions_log, fsync=fsync)
    model = None
    if os.environ.get("KAVI_LLM_BASE_URL", "").strip():
        from kavi_assets.runtime.handles import model_from_env

        model = model_from_env()  # summarize_note and search_notes use it; without it they fall back
    return SkillRunner(h, trusted.get, log, llm=model), log, trusted


def _parse_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise typer.BadParameter(
            f"{what} is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}") from None


def _confirm(skill: Any, yes: bool) -> bool:
    """--yes, or an interactive "yes"; without a terminal the runner refuses with a clear message."""
    from kavi_assets.runtime.executor import needs_confirmation

    if yes or not needs_confirmation(skill.side_effect_class):
        return yes
    if not sys.stdin.isatty():
        return False
    answer: str = typer.prompt(
        f"{skill.name} is {skill.side_effect_class.value}: it may change things. Type 'yes' to run")
    return answer.strip().lower() == "yes"


def _show(record: Any, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(record.summary(), indent=2))
        return
    colour = "green" if record.success else "red"
    console.print(f"[{colour}]{record.status}[/] {record.skill_name} {record.short_id} "
                  f"({record.duration_ms:.1f} ms)", highlight=False)
    if record.success:
        typer.echo(json.dumps(record.output_data(), indent=2))
    else:
        console.print(f"[red]{record.error}[/]", highlight=False)


def skills(home: HomeOpt = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List trusted skills with their input and output JSON Schemas."""
    from kavi_assets.runtime.executor import list_skills

    infos = list_skills(_trusted_map(_home(home)).values())
    if as_json:
        typer.echo(json.dumps([i.to_dict() for i in infos], indent=2))
        return
    table = Table(title="Trusted skills")
    for col in ("skill", "class", "inputs", "description"):
        table.add_column(col)
    for i in infos:
        d = i.to_dict()
        props = ", ".join(d.get("input_schema", {}).get("properties", {}))
        table.add_row(d["name"], d["side_effect_class"], props, str(d.get("description", ""))[:60])
    console.print(table)


def run(
    skill: Annotated[str, typer.Argument(help="a trusted skill")],
    json_input: Annotated[str, typer.Option("--json", help="the input as a JSON object")] = "{}",
    yes: YesOpt = False,
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--output-json", help="print the execution record as JSON")] = False,
) -> None:
    """Run a trusted skill: trust check, schema validation, execution, and an audit record."""
    h = _home(home)
    runner, _, _ = _runner(h)
    data = _parse_json(json_input, "--json")
    if not isinstance(data, dict):
        raise typer.BadParameter("--json must be a JSON object of the skill's input fields")
    confirmed = _confirm(runner.lookup(skill), yes)
    record = runner.run(skill, data, confirmed=confirmed)
    _show(record, as_json)
    if not record.success:
        raise typer.Exit(1)


def chain(
    json_spec: Annotated[str, typer.Option("--json", help="a ChainSpec as JSON, or @FILE")],
    yes: YesOpt = False,
    home: HomeOpt = None,
) -> None:
    """Run a chain of trusted skills, mapping each step's input from earlier outputs."""
    from pydantic import ValidationError

    from kavi_assets.runtime.chain import ChainSpec, run_chain

    text = Path(json_spec[1:]).read_text(encoding="utf-8") if json_spec.startswith("@") else json_spec
    try:
        spec = ChainSpec.model_validate(_parse_json(text, "the chain spec"))
    except ValidationError as err:
        raise typer.BadParameter(f"the chain spec is not valid: {err.errors()[0]['msg']}") from None
    runner, _, _ = _runner(_home(home))
    records = run_chain(runner, spec, confirmed=yes)
    for i, r in enumerate(records):
        colour = "green" if r.success else "red"
        console.print(f"step {i} [{colour}]{r.status}[/] {r.skill_name} {r.short_id}"
                      + (f"  {r.error}" if r.error else ""), highlight=False)
    if records and records[-1].success:
        typer.echo(json.dumps(records[-1].output_data(), indent=2))
    if not records or not all(r.success for r in records):
        raise typer.Exit(1)


def replay_cmd(
    execution: Annotated[str, typer.Argument(help="an execution id or a unique prefix (as `kavi tail` prints)")],
    yes: YesOpt = False,
    home: HomeOpt = None,
) -> None:
    """Re-run a past execution with its recorded input, if the same trusted code is still in place."""
    from kavi_assets.runtime.replay import replay

    h = _home(home)
    runner, log, trusted = _runner(h)
    original = log.find(execution)
    skill = trusted.get(original.skill_name)
    confirmed = _confirm(skill, yes) if skill is not None else yes
    record = replay(runner, log, execution, confirmed=confirmed,
                    current_hash=lambda name: trusted[name].sha256 if name in trusted else None)
    console.print(f"replay of {original.short_id}:", highlight=False)
    _show(record, False)
    if not record.success:
        raise typer.Exit(1)


def tail_cmd(
    n: Annotated[int, typer.Option("--n", help="how many records")] = 20,
    failures: Annotated[bool, typer.Option("--failures", help="only failed runs")] = False,
    skill: Annotated[str | None, typer.Option("--skill", help="only this skill")] = None,
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The latest execution records."""
    from kavi_assets.runtime.records import ExecutionLog
    from kavi_assets.runtime.sessions import format_duration, records_to_json, tail

    log = ExecutionLog(_home(home).executions_log)
    records, stats = log.read_with_stats()
    rows = tail(records, n, failures_only=failures, skill=skill)
    if as_json:
        typer.echo(json.dumps(records_to_json(rows), indent=2))
        return
    table = Table(title=f"executions ({stats.malformed} malformed lines skipped)" if stats.malformed else "executions")
    for col in ("id", "skill", "status", "duration", "started", "error"):
        table.add_column(col)
    for r in rows:
        table.add_row(r.short_id, r.skill_name, r.status, format_duration(r.duration_ms), r.started_at[:19],
                      (r.error or "")[:60])
    console.print(table)


def session(
    latest: Annotated[bool, typer.Option("--latest", help="the most recent session")] = False,
    session_id: Annotated[str | None, typer.Option("--id", help="a session id or prefix")] = None,
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The execution tree of a session: status, short id, duration and error for every run."""
    from kavi_assets.runtime.records import ExecutionLog
    from kavi_assets.runtime.sessions import render_tree, session_tree, tree_to_json

    if not latest and not session_id:
        raise typer.BadParameter("give --latest or --id ID")
    records = ExecutionLog(_home(home).executions_log).read_all()
    tree = session_tree(records, session_id=session_id, latest=latest or session_id is None)
    if as_json:
        typer.echo(json.dumps(tree_to_json(tree), indent=2))
    else:
        console.print(render_tree(tree))


def verify(home: HomeOpt = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Check the promotion hash chain, the registry projection and every trusted file against the ledger."""
    from kavi_assets.promotion.audit import audit

    h = _home(home)
    report = audit(_records(h), h, refresh_stale=True)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        if report.registry_note:
            console.print(f"[yellow]![/] {report.registry_note}", highlight=False)
        for p in report.problems():
            console.print(f"[red]✗[/] {p}", highlight=False)
        if report.ok:
            console.print(f"[green]✓[/] {report.promotions} promotions chained, {report.checked_skills} trusted "
                          "files match their hashes, registry matches the ledger")
    if not report.ok:
        raise typer.Exit(1)


def doctor(home: HomeOpt = None, as_json: Annotated[bool, typer.Option("--json")] = False,
           fix: Annotated[bool, typer.Option("--fix", help="mark runs of dead processes failed, close the "
                                             "attempts they left as ABANDONED, remove leaked sandboxes")] = False,
           ) -> None:
    """Check the installation: home, ledger, registry, trusted files, model endpoint, tools, Dagster, stale runs,
    abandoned attempts, leaked sandboxes, log."""
    from kavi_assets.cli.doctor import run_checks, sweep_home

    if fix:
        swept = sweep_home(KaviHome.from_env(home), fix=True)
        if not as_json:
            console.print(f"sweep: {swept.summary()}", highlight=False)
    checks = run_checks(KaviHome.from_env(home))
    if as_json:
        typer.echo(json.dumps([c.to_dict() for c in checks], indent=2))
    else:
        marks = {"ok": "[green]✓[/]", "warn": "[yellow]![/]", "fail": "[red]✗[/]"}
        for c in checks:
            console.print(f"{marks[c.status]} {c.name}: {c.detail}", highlight=False)
            if c.status != "ok" and c.fix:
                console.print(f"    fix: {c.fix}", highlight=False)
    if any(c.status == "fail" for c in checks):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("skills")(cli_errors(skills))
    app.command("run")(cli_errors(run))
    app.command("chain")(cli_errors(chain))
    app.command("replay")(cli_errors(replay_cmd))
    app.command("tail")(cli_errors(tail_cmd))
    app.command("session")(cli_errors(session))
    app.command("verify")(cli_errors(verify))
    app.command("doctor")(cli_errors(doctor))
