"""`kavi propose`, `forge`, `status`, `lineage`, `approve`, `retry` and `schema`: a proposal's way to trust."""

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors
from kavi_assets.cli.forge_run import forge_once
from kavi_assets.cli.home_option import HomeOpt, open_home, open_records
from kavi_assets.cli.json_output import print_json
from kavi_assets.cli.lineage_document import lineage_doc

console = make_console()

_RICH_TABLE_MAX_ROWS = 500


def propose(
    file: Annotated[Path, typer.Argument(help="a proposal in YAML or JSON")],
    home: HomeOpt = None,
    force: Annotated[bool, typer.Option("--force", help="record it even if a trusted skill looks the same")] = False,
) -> None:
    """Validate a proposal, record it in the ledger and add its partition in DAGSTER_HOME. Warns when a trusted
    skill is close to it, and refuses one above KAVI_SEARCH_DUPLICATE_SCORE unless --force (`kavi search`)."""
    from kavi.forge.intake import intake
    from kavi.proposals.model import load_proposal
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home

    h = open_home(home)
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



def forge(
    name: Annotated[str | None, typer.Argument(help="the proposal (partition) to forge")] = None,
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the outcome as JSON")] = False,
    all_: Annotated[bool, typer.Option("--all", help="forge every PROPOSED or FAILED proposal through the Dagster "
                                                     "queue, several at once")] = False,
    concurrency: Annotated[int | None, typer.Option("--concurrency", help="with --all: runs at once (default "
                                                    "$KAVI_MAX_CONCURRENT_RUNS, else 2)")] = None,
    again: Annotated[bool, typer.Option("--again", help="when another forge of NAME is running, forge a new attempt "
                                                        "after it (default: report that attempt's verdict)")] = False,
) -> None:
    """Run the next attempt of NAME through Dagster (packet, build, gates, research, promotion). Prints the verdict,
    the gates that failed with their first message, where the research note is and what to do next."""
    from kavi_assets.cli.outcome import forge_exit_status, print_forge_outcome

    h = open_home(home)
    if all_ or name is None:
        from kavi_assets.cli.parallel_cmd import forge_all

        raise typer.Exit(forge_all(h, name, as_json=as_json, concurrency=concurrency, all_=all_))
    out = forge_once(h, name, tags={"kavi/trigger": "cli"}, again=again)
    if as_json:
        print_json(out)
        if code := forge_exit_status(out):  # the same status as without --json: scripts need not parse
            raise typer.Exit(code)
        return
    code = print_forge_outcome(name, out, console, make_console(stderr=True))
    if code:
        raise typer.Exit(code)


def status(
    name: Annotated[str | None, typer.Argument(help="one proposal, or all")] = None,
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Every proposal's status, trusted version, ceremony level, attempts, latest model and failure, and a
    decomposition's parent and children."""
    from kavi_assets.cli.status_view import status_rows, status_table

    h = open_home(home)
    records = open_records(h)
    rows = status_rows(records, name)
    if name is not None and not rows:
        records.require_proposal(name)
    if as_json:
        print_json(rows)
        return
    header = ("skill", "class", "status", "version", "ceremony", "attempts", "latest model", "failure", "parent")
    cells = [(r["name"], r["side_effect_class"], r["status"], str(r["trusted_version"] or ""), r["ceremony"],
              str(r["attempts"]), r["model"] or "", r["failure_kind"] or "", r["parent"] or "") for r in rows]
    if len(cells) > _RICH_TABLE_MAX_ROWS:
        # Rich measures every cell of every row, slow for thousands of proposals: a long listing is plain aligned text.
        widths = [max(len(c[i]) for c in [header, *cells]) for i in range(len(header))]
        lines = [f"Kavi Forge — {h.root}: {len(cells)} proposals",
                 "  ".join(col.ljust(w) for col, w in zip(header, widths, strict=True)).rstrip()]
        lines += ["  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)).rstrip() for c in cells]
        typer.echo("\n".join(lines))
        return
    console.print(status_table(rows, f"Kavi Forge — {h.root}"))



def lineage(
    name: Annotated[str, typer.Argument()],
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """proposal → attempts → packet, answer, log, report, research → promotion, with hashes."""
    from rich.tree import Tree

    doc = lineage_doc(open_records(open_home(home)), name)
    if as_json:
        print_json(doc)
        return
    tree = Tree(f"[bold]{name}[/] {doc['status']}  spec {doc['spec_sha256'][:12]}  ceremony {doc['ceremony']['level']}")
    for a in doc["attempts"]:
        # A decomposed parent's composition attempt is built by no model: its endpoint says so ("composition").
        by = f"model {a['model']}" if a["model"] else str(a["endpoint"] or "no model")
        node = tree.add(f"attempt {a['attempt']}  {a['build_id']}  {by}  → {a['status']}"
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



def approve(
    name: Annotated[str, typer.Argument()],
    by: Annotated[str, typer.Option("--by", help="who approves (recorded in the ledger)")],
    home: HomeOpt = None,
) -> None:
    """Record a person's approval of NAME's latest verified build and promote it, as the next version, through
    Dagster. Approving a version that is already trusted says so and records nothing (exit 0); when someone else
    approved the same build first, theirs stands, yours is not recorded, and you are told who (exit 0)."""
    from kavi.forge.context import ForgeContext
    from kavi.forge.promote import AlreadyTrusted
    from kavi.forge.promote import approve as record_approval
    from kavi.settings import validate_config
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home, run_job

    validate_config()
    h = open_home(home)
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
    for line in outcome.widening:
        console.print(f"  reaches more than the trusted version: {line} (approved by a person: "
                      f"{(outcome.first or {}).get('approved_by', by)})", highlight=False, soft_wrap=True)
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


def retry(
    name: Annotated[str, typer.Argument()],
    by: Annotated[str, typer.Option("--by", help="who decides to retry (recorded)")],
    hint: Annotated[str | None, typer.Option("--hint", help="advice carried into the next packet")] = None,
    home: HomeOpt = None,
) -> None:
    """Record a person's decision to retry an escalated proposal (and a hint), then run the next attempt."""
    from kavi.lifecycle import ProposalStatus
    from kavi_assets.cli.outcome import print_forge_outcome

    h = open_home(home)
    records = open_records(h)
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


def register(app: typer.Typer) -> None:
    app.command()(cli_errors(propose))
    app.command()(cli_errors(forge))
    app.command()(cli_errors(status))
    app.command()(cli_errors(lineage))
    app.command()(cli_errors(approve))
    app.command()(cli_errors(retry))
    app.command("schema")(schema_cmd)
