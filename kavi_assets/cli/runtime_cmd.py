"""Runtime commands: list, run, chain, replay, tail, session, verify and doctor."""

import gc
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from kavi.home import KaviHome
from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors

console = make_console()
HomeOpt = Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="confirm side effects (FILE_WRITE, NETWORK, SECRET_READ)")]


def _home(home: str | None) -> KaviHome:
    return KaviHome.from_env(home).ensure()


def _records(h: KaviHome) -> Any:
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger

    return ForgeRecords(Ledger(h.ledger_path))


class TrustedVersions:
    """The ledger's trusted versions, looked up as NAME (the latest version) or NAME@VERSION (pinned)."""

    def __init__(self, h: KaviHome) -> None:
        from kavi.runtime.trust import TrustedSkill
        from kavi_assets.cli.reverify_cmd import refused_suspects, stale_verdicts_note

        self.records = _records(h)
        self.root = h.root
        self.by_name: dict[str, dict[int, Any]] = {}
        with self.records.session():
            builds: list[str] = []
            for t in self.records.trusted_versions():
                builds.append(t.build_id)
                self.by_name.setdefault(t.name, {})[t.version] = TrustedSkill(
                    t.name, h.root / t.skill_path, t.source_sha256, t.side_effect_class, t.required_secrets,
                    version=t.version, timeout_s=t.timeout_s, input_bounds=t.input_bounds)
            # SUSPECT versions the setting keeps from running: name -> {version: reason}
            self.suspect: dict[str, dict[int, str]] = refused_suspects(self.records)
            stale_verdicts_note(h, self.records, builds)

    def latest(self) -> list[Any]:
        return [versions[max(versions)] for _, versions in sorted(self.by_name.items())]

    def versions(self) -> dict[str, list[int]]:
        return {name: sorted(versions) for name, versions in self.by_name.items()}

    def get(self, ref: str) -> Any:
        """The trusted skill REF names, or None (unknown name); SkillNotTrusted for a version that is not trusted,
        carrying that version as the ledger knows it so the refusal can be recorded."""
        from kavi.runtime.errors import SkillNotTrusted

        name, pinned, number = ref.partition("@")
        versions = self.by_name.get(name)
        if not pinned:
            suspect = self.suspect.get(name, {})
            if suspect and max(suspect) > max(versions or [0]):
                # The newest version failed its re-verification: never fall back silently to an older one.
                from kavi.lifecycle import Refusal
                from kavi_assets.cli.reverify_cmd import suspect_refusal

                newest = max(suspect)
                raise SkillNotTrusted(suspect_refusal(name, newest, suspect[newest], versions),
                                      skill=self._promoted(name, newest), kind=Refusal.SUSPECT)
            if versions:
                return versions[max(versions)]
            latest = self._latest_promoted(name)
            if latest is None:
                return None
            number = str(latest)  # promoted once, trusted no longer: refused below, naming that version
        if not number.isdigit() or int(number) < 1:
            raise SkillNotTrusted(f"{ref!r} names no version: write NAME@N with N a version number, as in {name}@1")
        skill = (versions or {}).get(int(number))
        if skill is None:
            from kavi.lifecycle import Refusal

            status, reason = self.records.version_status(name, int(number))
            why = f"it is {status}" + (f" ({reason})" if reason else "") if status else "it was never promoted"
            if status == "SUSPECT":
                why += (f"; a person may reinstate it (kavi reinstate {name}@{number} --by WHO --reason TEXT), or "
                        "KAVI_SUSPECT_POLICY=allow runs SUSPECT versions")
            listed = ", ".join(str(v) for v in sorted(versions)) if versions else "none"
            kind = {"REVOKED": Refusal.REVOKED, "SUSPECT": Refusal.SUSPECT}.get(status, Refusal.NOT_TRUSTED)
            shown = ref if pinned else f"{name}@{number}"
            raise SkillNotTrusted(f"skill {shown!r} is not trusted: {why}; trusted versions of {name}: {listed}",
                                  skill=self._promoted(name, int(number)) if status else None, kind=kind)
        return skill

    def _latest_promoted(self, name: str) -> int | None:
        versions = [p.version for p in self.records.promotions(name) if p.version is not None]
        return max(versions) if versions else None

    def _promoted(self, name: str, version: int) -> Any:
        """A promoted version as a TrustedSkill (what the ledger recorded of it), or None when it was never promoted
        or its record lacks its class."""
        from kavi.runtime.trust import TrustedSkill
        from kavi.skills.base import SideEffectClass

        row = next((p for p in self.records.promotions(name) if p.version == version), None)
        if row is None or row.side_effect_class not in {c.value for c in SideEffectClass}:
            return None
        return TrustedSkill(name, self.root / row.skill_path, row.source_sha256,
                            SideEffectClass(row.side_effect_class), version=version)

    def current_hash(self, ref: str) -> str | None:
        skill = self.get(ref)
        return None if skill is None else str(skill.sha256)


def _runner(h: KaviHome, *, fsync: bool = True, workers: Any = None) -> tuple[Any, Any, TrustedVersions]:
    """The runner `kavi run`, chains, replays and the MCP server use; `workers` a pool of contained workers (None: a
    worker is started for each call)."""
    from kavi.runtime.executor import SkillRunner
    from kavi.runtime.records import ExecutionLog

    trusted = TrustedVersions(h)
    log = ExecutionLog(h.executions_log, fsync=fsync)
    model = None
    from kavi.settings import read_setting

    if read_setting("llm_base_url"):
        from kavi.runtime.model_endpoint import model_from_env

        model = model_from_env()  # summarize_note and search_notes use it; without it they fall back
    return SkillRunner(h, trusted.get, log, llm=model, workers=workers), log, trusted


def _parse_json(text: str, what: str) -> Any:
    """JSON from the command line within the run-input bounds (size, depth, string and number sizes)."""
    from kavi.proposals.bounds import RUN_INPUT_BOUNDS, parse_json_bounded

    try:
        return parse_json_bounded(text, RUN_INPUT_BOUNDS, what)
    except json.JSONDecodeError as err:
        raise typer.BadParameter(
            f"{what} is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}") from None


def _json_arg(value: str, option: str) -> tuple[str, str]:
    """The text of a JSON option given inline or as @FILE (read within the run-input size bound), and its name
    for messages. Every bound refusal reads `OPTION: ...` on one line."""
    from kavi.proposals.bounds import RUN_INPUT_BOUNDS, BoundsError, read_bounded

    if not value.startswith("@"):
        return value, option
    path = Path(value[1:])
    try:
        raw = read_bounded(path, RUN_INPUT_BOUNDS.max_bytes)
    except BoundsError as err:
        raise BoundsError(f"{option}: {err}") from None
    try:
        return raw.decode("utf-8"), f"{option} {path}"
    except UnicodeDecodeError:
        raise BoundsError(f"{option}: {path}: not UTF-8 text") from None


def _parse_json_option(value: str, option: str) -> Any:
    from kavi.proposals.bounds import BoundsError

    text, what = _json_arg(value, option)
    try:
        return _parse_json(text, what)
    except BoundsError as err:
        message = str(err)
        raise BoundsError(message if message.startswith(what) else f"{what}: {message}") from None


def _confirm(skill: Any, yes: bool) -> bool:
    """--yes, or an interactive "yes"; without a terminal the runner refuses with a clear message."""
    from kavi.runtime.executor import needs_confirmation

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
    ref = record.skill_name + (f"@{record.skill_version}" if record.skill_version is not None else "")
    console.print(f"[{colour}]{record.status}[/] {ref} {record.short_id} "
                  f"({record.duration_ms:.1f} ms)", highlight=False)
    if record.success:
        typer.echo(json.dumps(record.output_data(), indent=2))
    else:
        console.print(f"[red]{escape(str(record.error))}[/]", highlight=False)


def skills(home: HomeOpt = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List trusted skills (their latest version, and every trusted version) with their JSON Schemas."""
    from kavi.runtime.executor import list_skills

    trusted = TrustedVersions(_home(home))
    infos = list_skills(trusted.latest(), versions=trusted.versions())
    if as_json:
        typer.echo(json.dumps([i.to_dict() for i in infos], indent=2))
        return
    table = Table(title="Trusted skills (kavi run NAME runs the latest version; NAME@N pins one)")
    rows = [i.to_dict() for i in infos]
    # Names and classes are never cut (the other columns wrap to make room for them).
    table.add_column("skill", no_wrap=True, min_width=max((len(d["name"]) for d in rows), default=5))
    table.add_column("versions")
    table.add_column("class", no_wrap=True, min_width=max((len(d["side_effect_class"]) for d in rows), default=5))
    table.add_column("inputs")
    table.add_column("outputs")
    # Wrapped between words, never cut: the description is what tells a person which skill to run.
    table.add_column("description", ratio=1, overflow="fold")
    for d in rows:
        fields = [", ".join((d.get(key) or {}).get("properties", {})) for key in ("input_schema", "output_schema")]
        versions = ", ".join(map(str, d["versions"])) + (f" (runs {d['version']})" if len(d["versions"]) > 1 else "")
        table.add_row(escape(d["name"]), versions, d["side_effect_class"], escape(fields[0]), escape(fields[1]),
                      escape(str(d.get("error") or d.get("description") or "")))
    console.print(table)


def run(
    skill: Annotated[str, typer.Argument(help="a trusted skill: NAME (its latest version) or NAME@VERSION")],
    json_input: Annotated[str, typer.Option("--json", help="the input as a JSON object, or @FILE")] = "{}",
    yes: YesOpt = False,
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--output-json", help="print the execution record as JSON")] = False,
) -> None:
    """Run a trusted skill: trust check, schema validation, execution, and an audit record."""
    from kavi.runtime.worker import one_call_pool

    # The call's contained worker (started as the command began, kavi_assets.cli.main) starts while the rest of the
    # command is imported and the ledger is read: it is ready when the run needs it.
    workers = one_call_pool()
    data = _parse_json_option(json_input, "--json")
    h = _home(home)
    runner, _, _ = _runner(h, workers=workers)
    # What the command has built so far lives until it exits: the collection at its end (kavi_assets.cli.main)
    # looks only at what the call allocates.
    gc.freeze()
    if not isinstance(data, dict):
        raise typer.BadParameter("--json must be a JSON object of the skill's input fields")
    from kavi.runtime.errors import SkillNotTrusted

    try:
        confirmed = _confirm(runner.lookup(skill), yes)
    except SkillNotTrusted:
        confirmed = False  # the runner refuses it again, and records the refusal
    record = runner.run(skill, data, confirmed=confirmed)
    if _is_input_error(record):
        # An input that does not match the skill's schema (a field it does not name included) is a usage error,
        # like a bad option: one line on stderr, exit 2 (the refused run is in the execution log).
        if as_json:
            typer.echo(json.dumps(record.summary(), indent=2))
        make_console(stderr=True).print(f"[red]error:[/] {escape(str(record.error))} (execution {record.short_id}; "
                                        f"kavi skills shows the schema)", highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    _show(record, as_json)
    if record.log_error:
        # The call ran and its outcome is above; only its record is missing (its `started` line is in the log).
        make_console(stderr=True).print(f"[yellow]warning:[/] the call ran, but its record could not be written: "
                                        f"{escape(record.log_error)} (its start is in the execution log as "
                                        f"{record.short_id})", highlight=False, soft_wrap=True)
    if not record.success:
        raise typer.Exit(1)


def _is_input_error(record: Any) -> bool:
    return not record.success and str(record.error or "").startswith("InputValidationError")


def chain(
    json_spec: Annotated[str, typer.Option("--json", help="a ChainSpec as JSON, or @FILE")],
    yes: YesOpt = False,
    home: HomeOpt = None,
) -> None:
    """Run a chain of trusted skills, mapping each step's input from earlier outputs."""
    from pydantic import ValidationError

    from kavi.runtime.chain import ChainSpec, run_chain

    data = _parse_json_option(json_spec, "--json")
    try:
        spec = ChainSpec.model_validate(data)
    except ValidationError as err:
        raise typer.BadParameter(f"the chain spec is not valid: {err.errors()[0]['msg']}") from None
    from kavi.runtime.worker import WorkerPool

    # One worker waits ahead of each step (a step's worker runs that step only).
    runner, _, _ = _runner(_home(home), workers=WorkerPool(1, warm=1))
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
    from kavi.runtime.replay import replay
    from kavi.runtime.worker import WorkerPool

    h = _home(home)
    runner, log, trusted = _runner(h, workers=WorkerPool(1, warm=1, refill=False))
    original = log.find(execution)
    ref = original.skill_name if original.skill_version is None else f"{original.skill_name}@{original.skill_version}"
    skill = trusted.get(ref)
    confirmed = _confirm(skill, yes) if skill is not None else yes
    record = replay(runner, log, execution, confirmed=confirmed, current_hash=trusted.current_hash)
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
    from kavi.runtime.records import ExecutionLog
    from kavi.runtime.sessions import format_duration, records_to_json, tail

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
    from kavi.runtime.records import ExecutionLog
    from kavi.runtime.sessions import render_tree, session_tree, tree_to_json

    if not latest and not session_id:
        raise typer.BadParameter("give --latest or --id ID")
    records = ExecutionLog(_home(home).executions_log).read_all()
    tree = session_tree(records, session_id=session_id, latest=latest or session_id is None)
    if as_json:
        typer.echo(json.dumps(tree_to_json(tree), indent=2))
    else:
        console.print(render_tree(tree))


def verify(home: HomeOpt = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Check the promotion hash chain, the registry projection, every trusted file and the skills folder against
    the ledger. Writes nothing: a registry that disagrees with the ledger is a problem (`kavi registry rebuild`
    rewrites it); one that is only behind the ledger is a note."""
    from kavi.promotion.audit import audit

    h = _home(home)
    report = audit(_records(h), h)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        if report.registry_note:
            console.print(f"[yellow]![/] {escape(report.registry_note)}", highlight=False, soft_wrap=True)
        for p in report.problems():
            console.print(f"[red]✗[/] {escape(p)}", highlight=False, soft_wrap=True)
        if report.ok:
            console.print(f"[green]✓[/] {report.promotions} promotions chained, {report.checked_attestations} "
                          f"signed attestations verified, {report.checked_skills} trusted "
                          "files match their hashes, no stray file in the skills folder, registry "
                          + ("behind the ledger (see above)" if report.registry_note else "matches the ledger"))
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


registry_app = typer.Typer(name="registry", help="The registry file: a projection of the ledger.",
                           no_args_is_help=True)


def registry_rebuild(home: HomeOpt = None) -> None:
    """Rewrite registry.json from the ledger, whatever it holds now (the explicit fix for a registry that
    `kavi verify` reports as disagreeing with the ledger)."""
    from kavi.promotion.registry import registry_state, write_registry

    h = _home(home)
    records = _records(h)
    before = registry_state(records, h.registry_path)
    data = write_registry(records, h.registry_path)
    versions = sum(len(s["versions"]) for s in data["skills"])
    was = {"current": "it matched the ledger", "behind": "it was behind the ledger", "missing": "it was missing",
           "edited": "it disagreed with the ledger"}[before.kind]
    console.print(f"[green]✓[/] rewrote {h.registry_path.name} from the ledger ({was}): {len(data['skills'])} "
                  f"skills, {versions} trusted versions, at promotion #{data['ledger_mark']['last_promotion_seq']}",
                  highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    registry_app.command("rebuild")(cli_errors(registry_rebuild))
    app.add_typer(registry_app)
    app.command("skills")(cli_errors(skills))
    app.command("run")(cli_errors(run))
    app.command("chain")(cli_errors(chain))
    app.command("replay")(cli_errors(replay_cmd))
    app.command("tail")(cli_errors(tail_cmd))
    app.command("session")(cli_errors(session))
    app.command("verify")(cli_errors(verify))
    app.command("doctor")(cli_errors(doctor))
