"""`kavi`: propose, forge, inspect, approve and run skills. Every command honours KAVI_HOME and DAGSTER_HOME."""

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from kavi.home import KaviHome
from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors
from kavi_assets.cli.outcome import EXIT_STATUS_HELP

app = typer.Typer(
    name="kavi",
    help="Kavi Forge: models write skills, independent gates decide, the DuckDB ledger records every step.",
    epilog=EXIT_STATUS_HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = make_console()

_RICH_TABLE_MAX_ROWS = 500
HomeOpt = Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")]


def _version(value: bool) -> None:
    if value:
        from kavi_assets import __version__

        typer.echo(f"kavi {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="print the version and exit")] = False) -> None:
    """Kavi Forge: models write skills, independent gates decide, the DuckDB ledger records every step."""


def _home(home: str | None) -> KaviHome:
    return KaviHome.from_env(home).ensure()


def _ctx(home: KaviHome, *, auto_approve: list[str] | None = None) -> Any:
    from kavi.forge.context import ForgeContext
    from resources.gates import GateRunnerResource
    from resources.llm import LLMResource

    gates = GateRunnerResource(auto_approve=auto_approve or [])
    return ForgeContext.open(home, LLMResource().get_client, gates.settings())


def _records(home: KaviHome) -> Any:
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger

    return ForgeRecords(Ledger(home.ledger_path))


def _print_json(data: Any) -> None:
    if isinstance(data, list) and len(data) > 100:
        # A long listing: one compact object per line. json's indented output runs in pure Python, which took
        # 0.3 s for `kavi status --json` at 10,000 proposals; this is the C encoder, still one record per line.
        typer.echo("[\n" + ",\n".join("  " + json.dumps(row, default=str) for row in data) + "\n]")
        return
    typer.echo(json.dumps(data, indent=2, default=str))


@app.command()
@cli_errors
def propose(
    file: Annotated[Path, typer.Argument(help="a proposal in YAML or JSON")],
    home: HomeOpt = None,
    force: Annotated[bool, typer.Option("--force", help="record it even if a trusted skill looks the same")] = False,
) -> None:
    """Validate a proposal, record it in the ledger and add its partition in DAGSTER_HOME. Warns when a trusted
    skill is close to it, and refuses one above KAVI_SEARCH_DUPLICATE_SCORE unless --force (`kavi search`)."""
    from kavi.forge.pipeline import intake
    from kavi.proposals.model import load_proposal
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home

    h = _home(home)
    proposal = load_proposal(file)
    from kavi_assets.cli.serve_cmd import check_close_skills

    check_close_skills(h, proposal, force)
    ensure_dagster_home(h)
    from kavi.forge.context import ForgeContext

    ctx = ForgeContext.open(h, _no_llm)
    changed = intake(ctx, proposal, str(file.resolve()), actor="kavi propose")
    added = add_partition(proposal.name)
    row = ctx.records.require_proposal(proposal.name)
    if not changed:
        verb = f"identical to revision {row.revision}: nothing recorded"
    elif row.revision == 1:
        verb = "recorded as revision 1"
    else:
        verb = f"recorded as revision {row.revision} (a new revision; trusted versions are unchanged)"
    console.print(f"[green]{proposal.name}[/]: {verb}; partition {'added' if added else 'exists'} "
                  f"({proposal.side_effect_class.value}, {len(proposal.examples)} examples, "
                  f"{len(proposal.holdout_examples)} holdout)", highlight=False, soft_wrap=True)
    if changed and row.revision > 1:
        _print_revision(ctx.records.revisions(proposal.name)[-1], row.trusted_version)
    _print_recorded_model_note(proposal.name)


def _print_recorded_model_note(name: str) -> None:
    """One line on stderr when no endpoint is configured and the recorded model has nothing for this proposal."""
    from kavi_assets.cli.recorded_hint import recorded_model_note

    note = recorded_model_note(name)
    if note:
        make_console(stderr=True).print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)


def _no_llm() -> Any:
    raise RuntimeError("this command does not call a model")


def _print_revision(rev: Any, trusted_version: int | None) -> None:
    """A new revision's diff; a change of side-effect class first, and what it means for approval."""
    if rev.class_change:
        old, new = rev.class_change
        console.print(f"  [bold yellow]side_effect_class: {old} → {new}[/]: the version built from it needs a "
                      f"person's approval (kavi approve {rev.name} --by WHO); auto-approve does not apply",
                      highlight=False, soft_wrap=True)
    for d in rev.diff:
        if d["field"] != "side_effect_class":
            before, after = json.dumps(d["from"], default=str), json.dumps(d["to"], default=str)
            shown = f"{before[:60]} → {after[:60]}" if len(before) + len(after) < 160 else "changed"
            console.print(f"  {d['field']}: {shown}", highlight=False, soft_wrap=True)
    if trusted_version is not None:
        console.print(f"  {rev.name}@{trusted_version} keeps serving until a version of revision {rev.revision} is "
                      f"approved: kavi forge {rev.name}", highlight=False, soft_wrap=True)


def forge_once(h: KaviHome, name: str, *, tags: dict[str, str] | None = None,
               resources: dict[str, Any] | None = None) -> dict[str, Any]:
    """Materialize the forge group for one partition through Dagster, then read the outcome from the ledger."""
    from kavi.forge.locks import attempt_lock
    from kavi.settings import validate_config
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home, run_job, sweep_before_launch

    validate_config()  # a bad KAVI_* setting is one line and exit 2 here, not a crashed step inside the run
    ensure_dagster_home(h)
    from kavi.forge.pipeline import refuse_if_decomposed

    records = _records(h)
    refuse_if_decomposed(records.require_proposal(name))
    add_partition(name)
    sweep_before_launch(h)  # runs of killed processes would hold queue slots and leave attempts open
    # One attempt of a proposal at a time (the run takes the same lock again): wait for a running attempt to
    # finish, bounded by $KAVI_FORGE_WAIT_S, else say who is forging it.
    with attempt_lock(h, name, on_wait=lambda busy: make_console(stderr=True).print(
            f"waiting: {busy}", highlight=False, markup=False)):
        run = run_job("forge", name, tags=tags, resources=resources)
    return forge_outcome(h, records, name, run)


def forge_outcome(h: KaviHome, records: Any, name: str, run: Any, refresh_registry: bool = True) -> dict[str, Any]:
    """What one forge run came to, read from the ledger (the run's own attempt), as `kavi forge --json` prints it.
    Without `refresh_registry` the caller rewrites the registry file itself (once for a batch)."""
    from kavi_assets.cli.outcome import research_details

    row = records.require_proposal(name)
    build = _build_of_run(records, name, run.run_id)
    if row.status.value == "TRUSTED" and refresh_registry:
        # The forge run does not rewrite the registry projection (see pipeline.promote): the command that
        # promoted does, as `kavi approve` and `kavi demo` do, so the file is current when the command returns.
        from kavi.promotion.registry import refresh_registry_file

        refresh_registry_file(records, h.registry_path)
    return {
        "name": name,
        "errors": run.errors,
        "run_id": run.run_id,
        "run_success": run.success,
        "status": row.status.value,
        "attempt": build.attempt_number if build else 0,
        "build_id": build.build_id if build else None,
        "model": build.model if build else None,
        "failure_kind": build.failure_kind if build else None,
        "trusted_version": row.trusted_version,
        "infrastructure": _infrastructure_cause(records, name, build) if build else None,
        **(research_details(records, h, name, build) if build else {}),
    }


def _build_of_run(records: Any, name: str, run_id: str) -> Any:
    """The attempt this run made (not the latest one: another run may have made a newer attempt since)."""
    from kavi.ledger.records import LedgerRecordError

    try:
        return records.build_for_run(name, run_id)
    except LedgerRecordError:
        return None


def _infrastructure_cause(records: Any, name: str, build: Any) -> str | None:
    """For an INFRASTRUCTURE failure, what went wrong in the forge's own environment (one line)."""
    if build.failure_kind != "INFRASTRUCTURE":
        return None
    note = next((n for n in reversed(records.research_notes(name)) if n["build_id"] == build.build_id), None)
    causes = (note or {}).get("facts", {}).get("infrastructure") or {}
    return "; ".join(str(c) for c in causes.values())[:600] or "the forge's own environment failed"


@app.command()
@cli_errors
def forge(
    name: Annotated[str | None, typer.Argument(help="the proposal (partition) to forge")] = None,
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the outcome as JSON")] = False,
    all_: Annotated[bool, typer.Option("--all", help="forge every PROPOSED or FAILED proposal through the Dagster "
                                                     "queue, several at once")] = False,
    concurrency: Annotated[int | None, typer.Option("--concurrency", help="with --all: runs at once (default "
                                                    "$KAVI_MAX_CONCURRENT_RUNS, else 2)")] = None,
) -> None:
    """Run the next attempt of NAME through Dagster (packet, build, gates, research, promotion). Prints the verdict,
    the gates that failed with their first message, where the research note is and what to do next."""
    from kavi_assets.cli.outcome import print_forge_outcome

    h = _home(home)
    if all_ or name is None:
        from kavi_assets.cli.parallel_cmd import forge_all

        raise typer.Exit(forge_all(h, name, as_json=as_json, concurrency=concurrency, all_=all_))
    out = forge_once(h, name, tags={"kavi/trigger": "cli"})
    if as_json:
        _print_json(out)
        return
    code = print_forge_outcome(name, out, console, make_console(stderr=True))
    if code:
        raise typer.Exit(code)


@app.command()
@cli_errors
def status(
    name: Annotated[str | None, typer.Argument(help="one proposal, or all")] = None,
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Every proposal's status, attempts and latest model."""
    h = _home(home)
    records = _records(h)
    rows = records.list_status(name)
    if name is not None and not rows:
        records.require_proposal(name)
    if as_json:
        _print_json(rows)
        return
    header = ("skill", "class", "status", "attempts", "latest model", "failure")
    cells = [(r["name"], r["side_effect_class"], r["status"], str(r["attempts"]), r["model"] or "",
              r["failure_kind"] or "") for r in rows]
    if len(cells) > _RICH_TABLE_MAX_ROWS:
        # Rich measures every cell of every row (5 s for 10,000 proposals): a long listing is plain aligned text.
        widths = [max(len(c[i]) for c in [header, *cells]) for i in range(len(header))]
        lines = [f"Kavi Forge — {h.root}: {len(cells)} proposals",
                 "  ".join(col.ljust(w) for col, w in zip(header, widths, strict=True)).rstrip()]
        lines += ["  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)).rstrip() for c in cells]
        typer.echo("\n".join(lines))
        return
    table = Table(title=f"Kavi Forge — {h.root}")
    for col in header:
        table.add_column(col)
    for c in cells:
        table.add_row(*c)
    console.print(table)


def lineage_doc(records: Any, name: str) -> dict[str, Any]:
    with records.session():  # one connection for the dozen queries below
        return _lineage_doc(records, name)


def _lineage_doc(records: Any, name: str) -> dict[str, Any]:
    row = records.require_proposal(name)
    attempts = []
    builds = records.builds(name)
    ids = [b.build_id for b in builds]
    artifacts, verdicts = records.artifacts_of_builds(ids), records.gate_verdicts(ids)
    for b in builds:
        arts = artifacts[b.build_id]
        attempts.append({
            "attempt": b.attempt_number,
            "build_id": b.build_id,
            "parent_build_id": b.parent_build_id,
            "run_id": b.run_id,
            "model": b.model,
            "endpoint": b.endpoint,
            "status": b.status,
            "failure_kind": b.failure_kind,
            "packet_sha256": arts.get("packet"),
            "answer_sha256": arts.get("llm_answer"),
            "build_log_sha256": arts.get("build_log"),
            "skill_sha256": b.skill_sha256,
            "test_sha256": b.test_sha256,
            "report_sha256": arts.get("report"),
            "research_sha256": arts.get("research"),
            "gates": verdicts[b.build_id],
        })
    notes = {n["build_id"]: n for n in records.research_notes(name)}
    for a in attempts:
        n = notes.get(a["build_id"])
        if n:
            a["research"] = {"failure_kind": n["failure_kind"], "triggers": n["triggers"],
                             "escalated": n["escalated"], "facts": n["facts"]}
    promotions = [
        {"seq": p.seq, "version": p.version, "spec_revision": p.spec_revision, "side_effect_class": p.side_effect_class,
         "build_id": p.build_id, "approved_by": p.approved_by, "source_sha256": p.source_sha256,
         "skill_path": p.skill_path, "record_hash": p.record_hash, "prev_hash": p.prev_hash,
         "at": p.created_at.isoformat()}
        for p in records.promotions(name)
    ]
    revisions = [
        {"revision": r.revision, "spec_sha256": r.spec_sha256, "side_effect_class": r.side_effect_class.value,
         "class_change": list(r.class_change) if r.class_change else None, "diff": r.diff, "by": r.actor,
         "at": r.created_at.isoformat()}
        for r in records.revisions(name)
    ]
    return {
        "proposal": name,
        "status": row.status.value,
        "revision": row.revision,
        "trusted_version": row.trusted_version,
        "spec_sha256": row.spec_sha256,
        "side_effect_class": row.proposal.side_effect_class.value,
        "ceremony": _ceremony_of(records, name, row.proposal),
        "attempts": attempts,
        "promotions": promotions,
        "revisions": revisions,
        "events": records.status_events(name),
        "edges": records.lineage_edges(name),
        "decomposition_edges": _decomposition_edges(records, name),
    }


def _ceremony_of(records: Any, name: str, proposal: Any) -> dict[str, Any]:
    from kavi.forge.levels import proposal_ceremony

    return proposal_ceremony(records, name, proposal).to_dict()


@app.command()
@cli_errors
def lineage(
    name: Annotated[str, typer.Argument()],
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """proposal → attempts → packet, answer, log, report, research → promotion, with hashes."""
    from rich.tree import Tree

    doc = lineage_doc(_records(_home(home)), name)
    if as_json:
        _print_json(doc)
        return
    tree = Tree(f"[bold]{name}[/] {doc['status']}  spec {doc['spec_sha256'][:12]}  ceremony {doc['ceremony']['level']}")
    for a in doc["attempts"]:
        node = tree.add(f"attempt {a['attempt']}  {a['build_id']}  model {a['model']}  → {a['status']}"
                        + (f" ({a['failure_kind']})" if a["failure_kind"] else ""))
        for label, key in (("packet", "packet_sha256"), ("answer", "answer_sha256"), ("build log", "build_log_sha256"),
                           ("skill", "skill_sha256"), ("tests", "test_sha256"), ("report", "report_sha256"),
                           ("research", "research_sha256")):
            if a.get(key):
                node.add(f"{label:9} {a[key][:16]}")
        if a["gates"]:
            node.add("gates: " + ", ".join(f"{g}={v}" for g, v in a["gates"].items()))
        if a.get("research"):
            r = a["research"]
            rn = node.add(f"research: {r['failure_kind']}" + (f"  escalated: {', '.join(r['triggers'])}"
                                                               if r["escalated"] else ""))
            for gate, info in (r["facts"].get("gates") or {}).items():
                for m in info.get("messages", [])[:5]:
                    rn.add(f"{gate}: {m}")
            for v in r["facts"].get("violations", [])[:5]:
                rn.add(f"allowlist: {v}")
            if r["facts"].get("error"):
                rn.add(str(r["facts"]["error"])[:200])
    for p in doc["promotions"]:
        tree.add(f"[green]promotion #{p['seq']} → {name}@{p['version']}[/] {p['build_id']} "
                 f"approved by {p['approved_by']}  sha256 {p['source_sha256'][:16]}  record {p['record_hash'][:12]}")
    for e in doc["decomposition_edges"]:
        tree.add(f"decomposition {e['decomposition_id']} ({e['decomposition_status']}): {e['parent']} → child "
                 f"{e['child']}")
    console.print(tree)


def _decomposition_edges(records: Any, name: str) -> list[dict[str, Any]]:
    """Parent → child edges of decompositions touching NAME (issue 12); `kavi tree NAME` shows the whole tree."""
    from kavi.decompose.records import DecompositionRecords

    return DecompositionRecords(records).edges(name)


@app.command()
@cli_errors
def approve(
    name: Annotated[str, typer.Argument()],
    by: Annotated[str, typer.Option("--by", help="who approves (recorded in the ledger)")],
    home: HomeOpt = None,
) -> None:
    """Record a person's approval of NAME's latest verified build and promote it, as the next version, through
    Dagster. Approving a version that is already trusted says so and records nothing (exit 0); when someone else
    approved the same build first, theirs stands, yours is not recorded, and you are told who (exit 0)."""
    from kavi.forge.context import ForgeContext
    from kavi.forge.pipeline import AlreadyTrusted
    from kavi.forge.pipeline import approve as record_approval
    from kavi.settings import validate_config
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home, run_job

    validate_config()
    h = _home(home)
    ctx = ForgeContext.open(h, _no_llm)
    try:
        outcome = record_approval(ctx, name, by)
    except AlreadyTrusted as done:
        console.print(f"{done}: nothing recorded", highlight=False, soft_wrap=True)
        return
    build = outcome.build
    if outcome.class_change:
        console.print(f"  side_effect_class: {outcome.class_change[0]} → {outcome.class_change[1]} "
                      f"(approved by a person: {(outcome.first or {}).get('approved_by', by)})",
                      highlight=False)
    ensure_dagster_home(h)
    add_partition(name)
    run = run_job("promote", name, tags={"kavi/trigger": "approval", "kavi/approved_by": by})
    promo = ctx.records.promotion_for_build(build.build_id)
    if promo is None:
        raise typer.Exit(_fail(f"{name}: approval recorded but promotion did not complete (run {run.run_id})"))
    ref = f"{name}@{promo.version}"
    if outcome.recorded and promo.approved_by == by.strip():
        console.print(f"[green]{ref}[/] is TRUSTED: build {build.build_id}, sha256 {promo.source_sha256[:16]}, "
                      f"approved by {by}, promotion #{promo.seq}", highlight=False, soft_wrap=True)
    else:
        first = outcome.first["approved_by"] if outcome.first else promo.approved_by
        console.print(f"{ref}: {first} approved it first and it is trusted (build {build.build_id}, "
                      f"promotion #{promo.seq}, approved by {promo.approved_by}); your approval was not recorded",
                      highlight=False, soft_wrap=True)
    run_job("registry", None, tags={"kavi/trigger": "approval"})


def _fail(msg: str) -> int:
    make_console(stderr=True).print(f"[red]error:[/] {escape(msg)}", highlight=False)
    return 1


@app.command()
@cli_errors
def retry(
    name: Annotated[str, typer.Argument()],
    by: Annotated[str, typer.Option("--by", help="who decides to retry (recorded)")],
    hint: Annotated[str | None, typer.Option("--hint", help="advice carried into the next packet")] = None,
    home: HomeOpt = None,
) -> None:
    """Record a person's decision to retry an escalated proposal (and a hint), then run the next attempt."""
    from kavi.lifecycle import ProposalStatus
    from kavi_assets.cli.outcome import print_forge_outcome

    h = _home(home)
    records = _records(h)
    row = records.require_proposal(name)
    if row.status is ProposalStatus.TRUSTED:
        raise typer.Exit(_fail(f"{name} is already TRUSTED; nothing to retry"))
    records.record_retry_request(name, by, hint)
    records.set_status(name, ProposalStatus.PROPOSED, build_id=None,
                       reason=f"retry requested by {by}" + (f": {hint}" if hint else ""), actor=by)
    out = forge_once(h, name, tags={"kavi/trigger": "retry-by-person", "kavi/requested_by": by})
    code = print_forge_outcome(name, out, console, make_console(stderr=True))
    if code:
        raise typer.Exit(code)


@app.command("schema")
def schema_cmd(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="write to a file")] = None,
) -> None:
    """Print (or write) the JSON Schema of proposals, for editors."""
    from kavi.proposals.model import proposal_json_schema

    text = json.dumps(proposal_json_schema(), indent=2)
    if output:
        output.write_text(text + "\n", encoding="utf-8")
        console.print(f"wrote {output}")
    else:
        typer.echo(text)


def _register_optional() -> None:
    try:
        from kavi_assets.cli import check_cmd

        check_cmd.register(app)
    except ImportError:
        pass
    from kavi_assets.cli import ceremony_cmd, demo_cmd, ground_cmd, holdout_cmd, policy_cmd, runtime_cmd

    demo_cmd.register(app)
    policy_cmd.register(app)
    runtime_cmd.register(app)
    holdout_cmd.register(app)
    ceremony_cmd.register(app)
    from kavi_assets.cli import serve_cmd

    serve_cmd.register(app)
    from kavi_assets.cli import decompose_cmd

    decompose_cmd.register(app)
    ground_cmd.register(app)
    from kavi_assets.cli import scale_cmd

    scale_cmd.register(app)


_register_optional()


def main() -> None:
    """The `kavi` command: the app, then an exit that does not walk the whole heap again.

    At exit the interpreter collects garbage over everything a command loaded (Dagster, DuckDB, the definitions)
    several times: measured 0.5-0.9 s at the end of a command. One collection here runs every unreachable cycle's
    finalizers as an ordinary exit would; the objects still alive are then frozen, so the exit's own collections
    skip them (they are released with the process, as at any exit)."""
    try:
        app()
    finally:
        import gc

        gc.collect()
        gc.freeze()
