"""`kavi diff`: what changed between two versions of a skill: its surface, its schema and its code."""

import contextlib
import difflib
import json
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.markup import escape

from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors
from kavi_assets.cli.home_option import HomeOpt, open_home
from kavi_assets.cli.json_output import print_json

console = make_console()


@dataclass(frozen=True)
class _Side:
    label: str
    code: str
    spec: dict[str, Any]
    surface: Any


def _resolve(ctx: Any, ref: str) -> _Side:
    """NAME@V: a trusted version; NAME: its latest build (the candidate a person is asked to approve)."""
    from kavi.forge.surfaces import version_surface
    from kavi.ledger.records import LedgerRecordError
    from kavi_assets.cli.reverify_cmd import parse_ref

    name, version = parse_ref(ref)
    row = ctx.records.require_proposal(name)
    if version is not None:
        trusted = ctx.records.trusted_version(name, version)
        if trusted is None:
            raise LedgerRecordError(f"{name}@{version} was never trusted (kavi status {name} lists its versions)")
        promo = ctx.records.promotion_for_build(trusted.build_id)
        spec_sha = promo.spec_sha256 if promo else None
        surface = version_surface(ctx, name, trusted.source_sha256, spec_sha, trusted.side_effect_class.value)
        source_sha = trusted.source_sha256
        label = f"{name}@{version}"
    else:
        build = ctx.records.latest_build(name)
        if build is None or not build.skill_sha256:
            raise LedgerRecordError(f"{name} has no build with a skill source; forge or vet it first")
        spec_sha = row.spec_sha256
        surface = version_surface(ctx, name, build.skill_sha256, spec_sha, None)
        source_sha = build.skill_sha256
        label = f"{name} (build {build.build_id}, {build.status.lower()})"
    spec: dict[str, Any] = row.proposal.builder_view()
    if spec_sha:
        with contextlib.suppress(OSError, KeyError, ValueError):
            spec = json.loads(ctx.store.get(spec_sha))
    return _Side(label, ctx.store.get(source_sha).decode("utf-8", "replace"), spec, surface)


def _schema_changes(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    for key in ("side_effect_class", "inputs", "outputs", "required_secrets", "timeout_s", "description"):
        if a.get(key) != b.get(key):
            before, after = json.dumps(a.get(key), sort_keys=True), json.dumps(b.get(key), sort_keys=True)
            out.append(f"{key}: {before[:200]} → {after[:200]}")
    return out


def diff(
    first: Annotated[str, typer.Argument(help="NAME@A (a trusted version)")],
    second: Annotated[str | None, typer.Argument(help="NAME@B, or NAME for its latest build (default: NAME)")] = None,
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """What changed from one version of a skill to another: what it reaches (its surface: class, secrets, imports,
    hosts, vault writes), its schema, and its code. `kavi diff NAME@1 NAME` compares the trusted version with the
    latest build, the one an approval would promote."""
    from kavi.forge.context import ForgeContext
    from kavi.promotion.surface import narrowing, widening
    from kavi_assets.cli.lifecycle_cmd import _no_llm

    ctx = ForgeContext.open(open_home(home), _no_llm)
    a = _resolve(ctx, first)
    b = _resolve(ctx, second or first.partition("@")[0])
    wider, narrower = widening(a.surface, b.surface), narrowing(a.surface, b.surface)
    schema = _schema_changes(a.spec, b.spec)
    code = list(difflib.unified_diff(a.code.splitlines(), b.code.splitlines(), a.label, b.label, lineterm=""))
    if as_json:
        print_json({"from": a.label, "to": b.label, "surface": {"from": a.surface.to_json(), "to": b.surface.to_json(),
                    "wider": wider, "narrower": narrower}, "schema": schema, "code": code})
        return
    console.print(f"[bold]{escape(a.label)} → {escape(b.label)}[/]", highlight=False)
    console.print("surface: " + ("[bold yellow]wider[/]" if wider else "not wider"), highlight=False)
    for line in wider:
        console.print(f"  [yellow]+[/] {escape(line)}", highlight=False, soft_wrap=True)
    for line in narrower:
        console.print(f"  - {escape(line)}", highlight=False, soft_wrap=True)
    console.print("schema: " + ("unchanged" if not schema else f"{len(schema)} change(s)"), highlight=False)
    for line in schema:
        console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    console.print("code: " + ("unchanged" if not code else f"{sum(1 for c in code if c[:1] in '+-') - 2} "
                              "line(s) changed"), highlight=False)
    for line in code:
        console.print(line, highlight=False, soft_wrap=True, markup=False)


def register(app: typer.Typer) -> None:
    app.command()(cli_errors(diff))
