"""`kavi tree` and `kavi decompose`, and the demo's decomposition rounds."""

import json
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from kavi.home import KaviHome
from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors

console = make_console()
HomeOpt = Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")]
_COLOURS = {"TRUSTED": "green", "VERIFIED": "green", "GATE_VIOLATION": "red", "ESCALATED": "red", "FAILED": "red",
            "REVOKED": "red"}


def _ctx(h: KaviHome) -> Any:
    from kavi.forge.context import ForgeContext
    from resources.gates import GateRunnerResource
    from resources.llm import LLMResource

    return ForgeContext.open(h, LLMResource().get_client, GateRunnerResource().settings())


def _label(node: dict[str, Any]) -> str:
    state = str(node["state"])
    version = f" @{node['trusted_version']}" if node.get("trusted_version") else ""
    return (f"[bold]{escape(node['name'])}[/]{version} [{_COLOURS.get(state, 'yellow')}]{state}[/] "
            f"[dim]{node['side_effect_class']}[/]")


def render_tree(node: dict[str, Any], into: Tree | None = None) -> Tree:
    """The decomposition tree as rich renders it: each node's state, its decomposition and composition."""
    tree = into.add(_label(node)) if into is not None else Tree(_label(node))
    d = node.get("decomposition")
    if d:
        tree.add(f"decomposition {d['status']} ({escape(str(d['trigger']))}, model {escape(str(d['model']))}): "
                 f"{escape(str(d.get('reason') or ''))}")
        for child in node.get("children", []):
            render_tree(child, tree)
        comp = d.get("composition") or {}
        chain = " → ".join(str(s.get("skill")) for s in comp.get("steps", []))
        tree.add(f"composition: {escape(chain)} ⇒ {escape(json.dumps(comp.get('output')))}"
                 + (f"  sha256 {d['composition_sha256'][:16]}" if d.get("composition_sha256") else ""))
    for r in node.get("refused", []):
        tree.add(f"[red]decomposition refused:[/] {escape(str(r['reason']))}")
    return tree


def tree_cmd(
    name: Annotated[str, typer.Argument(help="a proposal")],
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the tree as JSON")] = False,
) -> None:
    """The decomposition tree of NAME: each node's state, the children, the composition."""
    from kavi.decompose.forge import tree
    from kavi.forge.context import ForgeContext

    h = KaviHome.from_env(home).ensure()

    def no_llm() -> Any:
        raise RuntimeError("kavi tree calls no model")

    doc = tree(ForgeContext.open(h, no_llm), name)
    if as_json:
        typer.echo(json.dumps(doc, indent=2, default=str))
        return
    console.print(render_tree(doc))


def decompose_cmd(
    name: Annotated[str, typer.Argument(help="a proposal the forge could not verify, or one already decomposed")],
    home: HomeOpt = None,
) -> None:
    """Run NAME's decomposition step through Dagster: ask for one when it is triggered, or advance the one that
    waits (fail it on a failed child, verify the composition once every child is trusted)."""
    from kavi.decompose.forge import tree
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home, run_job

    h = KaviHome.from_env(home).ensure()
    ensure_dagster_home(h)
    ctx = _ctx(h)
    ctx.records.require_proposal(name)
    add_partition(name)
    run = run_job("decompose", name, tags={"kavi/trigger": "cli"})
    for c in tree(ctx, name).get("children", []):
        add_partition(c["name"])
    console.print(render_tree(tree(ctx, name)))
    if not run.success:
        for e in run.errors:
            make_console(stderr=True).print(f"[red]error:[/] {escape(str(e))}", highlight=False)
        raise typer.Exit(1)


def demo_rounds(h: KaviHome, ctx: Any, names: list[str], out: Console, approve_as: str,
                retry_requests: Callable[[], list[Any]], rounds: int = 6) -> None:
    """The demo's decomposition: evaluate the decomposition sensor as the daemon would, run what it requests (the
    decompose job, the children's forge runs), let the retry sensor retry children, approve the children that
    verified (as the demo approves everything that verified) and promote them, until nothing is left to do. New
    children are appended to `names`."""
    from kavi.decompose.answer import DecomposeLimits
    from kavi.forge.promote import approve
    from kavi.lifecycle import ProposalStatus
    from kavi_assets.cli.dagster_env import add_partition, run_job
    from kavi_assets.cli.forge_run import forge_once
    from kavi_assets.cli.outcome import verdict_text
    from sensors.decompose import decomposition_requests

    for _ in range(rounds):
        requests = decomposition_requests(ctx, DecomposeLimits.from_env()) + list(retry_requests())
        if not requests:
            return
        for req in requests:
            key = str(req.partition_key)
            add_partition(key)
            if req.job_name == "decompose":
                run_job("decompose", key, tags={**req.tags, "dagster/run_key": req.run_key or ""}, home=h)
                d = ctx.records.require_proposal(key)
                out.print(f"  {key:22} decomposition step  → {d.status.value}   [dim]requested by the decomposition "
                          f"sensor ({escape(req.run_key or '')})[/]", highlight=False)
                from kavi.decompose.forge import tree

                for child in tree(ctx, key).get("children", []):
                    add_partition(child["name"])
                    if child["name"] not in names:
                        names.append(child["name"])
            else:
                result = forge_once(h, key, tags={**req.tags, "dagster/run_key": req.run_key or ""})
                out.print(f"  {key:22} attempt {result['attempt']}  {result['model'] or '':18} → "
                          f"{verdict_text(result)}   [dim]requested by {escape(req.tags.get('kavi/trigger', ''))}[/]",
                          highlight=False)
        for name in list(names):
            row = ctx.records.require_proposal(name)
            latest = ctx.records.latest_build(name)
            if row.status is ProposalStatus.VERIFIED and latest is not None and latest.model is not None:
                approve(ctx, name, approve_as)  # a child: its parent's composition needs it trusted
                run_job("promote", name, tags={"kavi/trigger": "demo-approval"}, home=h)


def print_decompositions(ctx: Any, names: list[str], out: Console) -> None:
    """One tree per decomposed proposal of the demo."""
    from kavi.decompose.forge import tree
    from kavi.decompose.records import DecompositionRecords

    dec = DecompositionRecords(ctx.records)
    for name in names:
        if dec.parent_of(name) is None and dec.of_parent(name):
            out.print(render_tree(tree(ctx, name)))


def register(app: typer.Typer) -> None:
    app.command("tree")(cli_errors(tree_cmd))
    app.command("decompose")(cli_errors(decompose_cmd))
