"""`kavi demo`: the main job — forge the example proposals end to end, offline, on the recorded model."""

import os
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors
from kavi_assets.home import KaviHome

console = make_console()
DEMO_APPROVER = "demo-user (via kavi demo)"


def examples_dir() -> Path:
    here = Path(__file__).resolve().parents[2] / "examples" / "proposals"
    return here


def _retry_requests(home_res: Any, gates_res: Any, cursor: str | None) -> tuple[list[Any], str | None]:
    """Evaluate the real retry sensor once, as the daemon would, and return its run requests and cursor."""
    import dagster as dg

    from kavi_assets.cli.dagster_env import instance
    from sensors.retry import retry_failed_attempts

    ctx = dg.build_sensor_context(instance=instance(), cursor=cursor,
                                  resources={"home": home_res, "gates": gates_res})
    result = retry_failed_attempts(ctx)
    requests = list(result.run_requests or []) if isinstance(result, dg.SensorResult) else []
    return requests, ctx.cursor


def demo(
    home: Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")] = None,
    examples: Annotated[Path | None, typer.Option("--examples", help="a folder of proposal files")] = None,
    approve_as: Annotated[str, typer.Option("--approve-as", help="who the demo records as approver")] = DEMO_APPROVER,
    max_rounds: Annotated[int, typer.Option(help="retry rounds before the demo stops")] = 6,
) -> None:
    """Set up a home, start the recorded model, propose the examples, forge them (retrying through the retry
    sensor), approve what verified, and print a summary and how to open the UI."""
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home, run_job
    from kavi_assets.cli.main import forge_once
    from kavi_assets.forge.context import ForgeContext
    from kavi_assets.forge.pipeline import approve, intake
    from kavi_assets.lifecycle import ProposalStatus
    from kavi_assets.proposals.model import load_proposal
    from resources.gates import GateRunnerResource
    from resources.home import SkillsHomeResource
    from resources.llm import LLMResource

    started = time.monotonic()
    h = KaviHome.from_env(home).ensure()
    os.environ["KAVI_HOME"] = str(h.root)
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
        intake(ctx, prop, str(path), actor="kavi demo")
        add_partition(prop.name)
        names.append(prop.name)
    console.print(f"proposed      {len(names)}: {', '.join(names)}")

    home_res = SkillsHomeResource(root=str(h.root))
    gates_res = GateRunnerResource(retry_backoff_s=0.0)
    crashed = 0
    for name in names:
        row = ctx.records.require_proposal(name)
        if row.status in (ProposalStatus.PROPOSED,):
            out = forge_once(h, name, tags={"kavi/trigger": "demo"})
            crashed += len(out["errors"])
            for e in out["errors"]:
                console.print(f"  [red]error:[/] {escape(str(e))}", highlight=False)
            console.print(f"  {name:22} attempt {out['attempt']}  {out['model'] or '':18} → {out['status']}"
                          + (f" ({out['failure_kind']})" if out["failure_kind"] else ""))
    cursor: str | None = None
    for _ in range(max_rounds):
        requests, cursor = _retry_requests(home_res, gates_res, cursor)
        if not requests:
            break
        for req in requests:
            name = str(req.partition_key)
            out = forge_once(h, name, tags={**req.tags, "dagster/run_key": req.run_key or ""})
            crashed += len(out["errors"])
            for e in out["errors"]:
                console.print(f"  [red]error:[/] {escape(str(e))}", highlight=False)
            console.print(f"  {name:22} attempt {out['attempt']}  {out['model'] or '':18} → {out['status']}"
                          + (f" ({out['failure_kind']})" if out["failure_kind"] else "")
                          + f"   [dim]requested by the retry sensor ({req.run_key})[/]")

    for name in names:
        row = ctx.records.require_proposal(name)
        if row.status is ProposalStatus.VERIFIED:
            approve(ctx, name, approve_as)
            run_job("promote", name, tags={"kavi/trigger": "demo-approval"})
    run_job("registry", None, tags={"kavi/trigger": "demo"})
    run_job("learn", None, tags={"kavi/trigger": "demo"})

    _summary(ctx, names)
    elapsed = time.monotonic() - started
    console.print(f"\nfinished in {elapsed:.1f}s. Open the UI:\n"
                  f"  KAVI_HOME={h.root} DAGSTER_HOME={dagster_home} dagster dev -m kavi_assets.definitions\n"
                  "then browse Assets → forge (lineage graph, partitions, per-gate checks).\n"
                  f"Inspect from the shell: kavi status --home {h.root} | kavi lineage slugify_title --home {h.root}")
    if crashed:
        raise typer.Exit(_fail_steps(crashed))


def _fail_steps(n: int) -> int:
    make_console(stderr=True).print(f"[red]error:[/] {n} forge step(s) crashed (their root causes are printed "
                                    "above)", highlight=False)
    return 1


def _summary(ctx: Any, names: list[str]) -> None:
    trusted = {t.name: t for t in ctx.records.trusted()}
    table = Table(title="Forge summary")
    for col in ("skill", "class", "status", "trusted version", "attempts", "models", "failures on the way", "sha256"):
        table.add_column(col)
    for name in names:
        row = ctx.records.require_proposal(name)
        builds = ctx.records.builds(name)
        fails = [f"a{b.attempt_number}:{b.failure_kind}" for b in builds if b.failure_kind]
        colour = {"TRUSTED": "green", "GATE_VIOLATION": "red", "ESCALATED": "red"}.get(row.status.value, "yellow")
        table.add_row(
            name, row.proposal.side_effect_class.value, f"[{colour}]{row.status.value}[/]",
            f"{name}@{trusted[name].version}" if name in trusted else "", str(len(builds)),
            ", ".join(f"a{b.attempt_number}:{b.model}" for b in builds), ", ".join(fails),
            trusted[name].source_sha256[:12] if name in trusted else "",
        )
    console.print(table)


def _err(msg: str) -> int:
    make_console(stderr=True).print(f"[red]error:[/] {escape(msg)}", highlight=False)
    return 2


def register(app: typer.Typer) -> None:
    app.command("demo")(cli_errors(demo))
