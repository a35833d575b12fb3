"""`kavi demo`: the main job — forge the example proposals end to end, offline, on the recorded model."""

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kavi.home import KaviHome
from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors
from kavi_assets.cli.example_proposals import examples_dir
from kavi_assets.cli.retry_sensor import retry_requests

console = make_console()
DEMO_APPROVER = "demo-user (via kavi demo)"


def demo(
    home: Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")] = None,
    examples: Annotated[Path | None, typer.Option("--examples", help="a folder of proposal files")] = None,
    approve_as: Annotated[str, typer.Option("--approve-as", help="who the demo records as approver")] = DEMO_APPROVER,
    max_rounds: Annotated[int, typer.Option(help="retry rounds before the demo stops")] = 6,
    concurrency: Annotated[int, typer.Option("--concurrency", help="forge runs at once through the Dagster queue "
                                             "(1: one after another in this process)")] = 1,
) -> None:
    """Set up a home, start the recorded model, propose the examples, forge them (retrying through the retry
    sensor), approve what verified, and print a summary and how to open the UI."""
    from kavi.forge.context import ForgeContext
    from kavi.forge.intake import intake
    from kavi.forge.promote import approve
    from kavi.lifecycle import ProposalStatus
    from kavi.proposals.model import load_proposal
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home, run_job
    from kavi_assets.cli.forge_run import forge_once
    from kavi_assets.cli.parallel import batch_ledger_host
    from kavi_assets.cli.serve_cmd import show_close_skills
    from resources.gates import GateRunnerResource
    from resources.home import SkillsHomeResource
    from resources.llm import LLMResource

    started = time.monotonic()
    h = KaviHome.from_env(home).ensure()
    dagster_home = ensure_dagster_home(h)
    llm = LLMResource()
    client = llm.get_client()
    console.rule("[bold]Kavi Forge demo")
    console.print(f"skills home   {h.root}\nDAGSTER_HOME  {dagster_home}\nmodel         {client.endpoint_label}")
    if client.settings.recorded:
        console.print("[yellow]The model is the RECORDED MODEL: an OpenAI-compatible server on loopback replaying "
                      "recorded completions (cassettes in the repo). It is not a live model.[/]")
    console.print(f"models        {', '.join(client.settings.models)}")

    folder = examples or examples_dir()
    files = sorted(p for p in folder.glob("*.y*ml")) + sorted(folder.glob("*.json"))
    if not files:
        raise typer.Exit(_err(f"no proposal files in {folder}"))
    ctx = ForgeContext.open(h, llm.get_client)
    names: list[str] = []
    for path in files:
        prop = load_proposal(path)
        refusal = show_close_skills(h, prop, records=ctx.records)  # the duplicate guard of kavi propose
        if refusal is not None:  # a trusted skill already does it: not recorded, and the demo says which
            console.print(f"[yellow]not proposed[/] {escape(refusal)}", highlight=False, soft_wrap=True)
            continue
        intake(ctx, prop, str(path), actor="kavi demo")
        add_partition(prop.name)
        names.append(prop.name)
    console.print(f"proposed      {len(names)}: {', '.join(names)}")

    # One ledger host for the demo's runs, as a batch has (kavi_assets/cli/parallel.py): the file stays open in it,
    # where every unit of work of the runs in this process would otherwise attach it and, after a write, checkpoint
    # it at its close; `kavi status` in another shell goes through the host meanwhile.
    with batch_ledger_host(h.ledger_path):
        home_res = SkillsHomeResource(root=str(h.root))
        gates_res = GateRunnerResource(retry_backoff_s=0.0)
        crashed = 0
        if concurrency > 1:  # the same forging, N runs at once (kavi_assets/cli/parallel_cmd.py)
            from kavi_assets.cli.parallel_cmd import demo_forging

            crashed = demo_forging(h, ctx, names, concurrency, max_rounds, home_res, gates_res, console)
        for name in names if concurrency <= 1 else []:
            row = ctx.records.require_proposal(name)
            if row.status in (ProposalStatus.PROPOSED,):
                crashed += _show_attempt(console, name, forge_once(h, name, tags={"kavi/trigger": "demo"}))
        cursor: str | None = None
        for _ in range(max_rounds if concurrency <= 1 else 0):
            requests, cursor = retry_requests(home_res, gates_res, cursor)
            if not requests:
                break
            for req in requests:
                name = str(req.partition_key)
                out = forge_once(h, name, tags={**req.tags, "dagster/run_key": req.run_key or ""})
                crashed += _show_attempt(console, name, out,
                                         f"   [dim]requested by the retry sensor ({req.run_key})[/]")

        # Decomposition: what could not be verified is split, its children forged and trusted, its composition
        # verified; the parent is then approved and promoted below like any verified proposal.
        from kavi_assets.cli.decompose_cmd import demo_rounds

        retry_cursor: list[str | None] = [cursor]

        def retries() -> list[Any]:
            found, retry_cursor[0] = retry_requests(home_res, gates_res, retry_cursor[0])
            return found

        demo_rounds(h, ctx, names, console, approve_as, retries)
        for name in names:
            row = ctx.records.require_proposal(name)
            if row.status is ProposalStatus.VERIFIED:
                approve(ctx, name, approve_as)
                run_job("promote", name, tags={"kavi/trigger": "demo-approval"}, home=h)
        run_job("registry", None, tags={"kavi/trigger": "demo"}, home=h)
        run_job("learn", None, tags={"kavi/trigger": "demo"}, home=h)

    print_summary(ctx, names, console)
    console.print(f"\nfinished in {time.monotonic() - started:.1f}s.", highlight=False)
    for line in closing_lines(h.root, dagster_home):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    from kavi_assets.cli.serve_cmd import tools_lines

    for line in tools_lines(h):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    if crashed:
        raise typer.Exit(_fail_steps(crashed))


def _show_attempt(console: Console, name: str, out: dict[str, Any], note: str = "") -> int:
    """One line for a forge run of the demo (its errors first); how many errors it had."""
    from kavi_assets.cli.outcome import verdict_text

    for e in out["errors"]:
        console.print(f"  [red]error:[/] {escape(str(e))}", highlight=False)
    console.print(f"  {name:22} attempt {out['attempt']}  {out['model'] or '':18} → {verdict_text(out)}{note}",
                  highlight=False)
    return len(out["errors"])


def _fail_steps(n: int) -> int:
    make_console(stderr=True).print(f"[red]error:[/] {n} forge step(s) crashed (their root causes are printed "
                                    "above)", highlight=False)
    return 1


def closing_lines(home: Path, dagster_home: Path) -> list[str]:
    """Where to look next: the UI, then each shell command on a line of its own (no "a | b" that reads like a pipe)."""
    return [
        "Open the UI:",
        f"  KAVI_HOME={home} DAGSTER_HOME={dagster_home} dagster dev -m kavi_assets.definitions",
        "  then open Catalog → the forge group (lineage graph, partitions, per-gate checks).",
        "Inspect from the shell:",
        f"  kavi status --home {home}",
        f"  kavi lineage slugify_title --home {home}",
    ]


def summary_table(ctx: Any, names: list[str]) -> Table:
    """One row per proposal, narrow enough for a 100-column terminal: each attempt on a line of its own (`aN
    model`), its failure kind indented below it, instead of comma-joined lists that rich had to cut."""
    trusted = {t.name: t for t in ctx.records.trusted()}
    # No outer edge and collapsed cell padding: the longest name (a decomposition child) and the longest failure
    # kind (COACH_CHANGES_REQUESTED) fit whole in 100 columns.
    table = Table(title="Forge summary", show_edge=False, collapse_padding=True)
    table.add_column("skill")
    table.add_column("class")
    table.add_column("status")
    table.add_column("version", justify="right")
    table.add_column("sha256")
    table.add_column("attempts", overflow="fold")
    for name in names:
        row = ctx.records.require_proposal(name)
        attempts: list[str] = []
        for b in ctx.records.builds(name):
            attempts.append(f"a{b.attempt_number} {escape(str(b.model or b.endpoint or '?'))}")
            if b.failure_kind:
                attempts.append(f"  [yellow]{escape(b.failure_kind)}[/]")
        colour = {"TRUSTED": "green", "GATE_VIOLATION": "red", "ESCALATED": "red"}.get(row.status.value, "yellow")
        t = trusted.get(name)
        table.add_row(name, row.proposal.side_effect_class.value, f"[{colour}]{row.status.value}[/]",
                      str(t.version) if t else "", t.source_sha256[:12] if t else "", "\n".join(attempts))
    return table


def print_summary(ctx: Any, names: list[str], out: Console) -> None:
    from kavi_assets.cli.decompose_cmd import print_decompositions

    out.print(summary_table(ctx, names))
    print_decompositions(ctx, names, out)


def _err(msg: str) -> int:
    make_console(stderr=True).print(f"[red]error:[/] {escape(msg)}", highlight=False)
    return 2


def register(app: typer.Typer) -> None:
    app.command("demo")(cli_errors(demo))
