"""`kavi card` and `kavi export`: a trusted version's skill card, and the version in the ecosystem's formats."""

from pathlib import Path
from typing import Annotated, Any

import typer

from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors
from kavi_assets.cli.home_option import HomeOpt, open_home
from kavi_assets.cli.json_output import print_json

console = make_console()


def version_promotion(ctx: Any, ref: str) -> Any:
    """The promotion of NAME@V, or of NAME's latest trusted version."""
    from kavi.ledger.records import LedgerRecordError
    from kavi_assets.cli.reverify_cmd import parse_ref

    name, version = parse_ref(ref)
    ctx.records.require_proposal(name)
    trusted = (ctx.records.trusted_version(name, version) if version is not None
               else next(iter(ctx.records.trusted(name)), None))
    if trusted is None:
        raise LedgerRecordError(f"{ref} is not a trusted version (kavi status {name})")
    promo = ctx.records.promotion_for_build(trusted.build_id)
    if promo is None:
        raise LedgerRecordError(f"{ref}: no promotion record")
    return promo


def card(
    ref: Annotated[str, typer.Argument(help="NAME or NAME@VERSION (default: its latest trusted version)")],
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="the card's data, as the attestation hashes it")] = False,
) -> None:
    """A trusted version's skill card: what it does, what it reaches, the evidence and its figures, its known limits
    and what forging it cost. The card is generated at promotion and its hash is in the version's attestation."""
    from kavi.forge.card import attested_card, card_markdown
    from kavi.forge.context import ForgeContext
    from kavi_assets.cli.lifecycle_cmd import _no_llm

    ctx = ForgeContext.open(open_home(home), _no_llm)
    data, attested = attested_card(ctx, version_promotion(ctx, ref))
    if as_json:
        print_json({**data, "attested": attested})
        return
    typer.echo(card_markdown(data), nl=False)
    if not attested:
        typer.echo("\n(generated now: this version was attested before skill cards existed)")


def export(
    ref: Annotated[str, typer.Argument(help="NAME or NAME@VERSION (default: its latest trusted version)")],
    out_dir: Annotated[Path, typer.Argument(help="the folder to write the export into")],
    fmt: Annotated[str, typer.Option("--format", help="agent-skill: an Agent Skills folder")] = "agent-skill",
    home: HomeOpt = None,
) -> None:
    """Write a trusted version as an Agent Skills folder: SKILL.md (its card in the body), scripts/NAME.py (the
    trusted bytes), scripts/run.py (runs it in the contained runtime once the attestation holds),
    attestation.json, card.json and kavi.json."""
    from kavi.forge.context import ForgeContext
    from kavi.forge.export import export_agent_skill
    from kavi.settings_parsers import ConfigError
    from kavi_assets.cli.lifecycle_cmd import _no_llm

    if fmt != "agent-skill":
        raise ConfigError(f"--format {fmt!r}: the one format is agent-skill")
    ctx = ForgeContext.open(open_home(home), _no_llm)
    folder = export_agent_skill(ctx, version_promotion(ctx, ref), out_dir)
    console.print(f"{ref} exported to {folder} (Agent Skills folder; run it with: python "
                  f"{folder / 'scripts' / 'run.py'} '{{...}}')", highlight=False, soft_wrap=True, markup=False)


def register(app: typer.Typer) -> None:
    app.command()(cli_errors(card))
    app.command()(cli_errors(export))
