"""`kavi ceremony NAME [--level L --by WHO] [--override --reason TEXT]`: show or set a proposal's ceremony level.

Raising the level is always allowed; a level below the one the complexity score gives needs `--override --reason`;
both are recorded in the ledger with who and when. A refused change is one line and exit 2.
"""

import json
from typing import Annotated

import typer

from kavi.home import KaviHome
from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors

console = make_console()


def ceremony(
    name: Annotated[str, typer.Argument(help="the proposal")],
    level: Annotated[str | None, typer.Option("--level", help="low, standard or strict")] = None,
    by: Annotated[str, typer.Option("--by", help="who sets it (recorded in the ledger)")] = "",
    override: Annotated[bool, typer.Option("--override", help="set a level below the score's (needs --reason)")]
    = False,
    reason: Annotated[str, typer.Option("--reason", help="why (required with --override)")] = "",
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
    home: Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")] = None,
) -> None:
    """Show NAME's ceremony level (from its complexity score, or a person's), or set it with --level."""
    from kavi.forge.ceremony import CeremonyChangeRefused, ceremony_for, ceremony_plan
    from kavi.forge.levels import proposal_ceremony, set_level
    from kavi.ledger.coach_records import levels
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger
    from kavi.proposals.model import NAME_RE

    if len(name) > 100 or not NAME_RE.fullmatch(name):  # the proposal-name rules, before the name reaches the ledger
        _refuse(f"{name[:60]!r} is not a proposal name (snake_case: lowercase letters, digits, single underscores)")
    records = ForgeRecords(Ledger(KaviHome.from_env(home).ensure().ledger_path))
    if level is not None:
        try:
            change = set_level(records, name, level, actor=by, override=override, reason=reason)
        except CeremonyChangeRefused as err:
            _refuse(f"{name}: {err}")
        if not as_json:
            console.print(f"{name}: ceremony {change.before.level.value} → {change.after.level.value} "
                          f"(set by {by.strip()}{', override' if change.override else ''})", highlight=False,
                          markup=False, soft_wrap=True)
    elif override or reason:
        _refuse("--override and --reason go with --level")
    with records.session():
        row = records.require_proposal(name)
        current = proposal_ceremony(records, name, row.proposal)
        history = levels(records, name)
    plan = ceremony_plan(current)
    if as_json:
        typer.echo(json.dumps({"name": name, **plan, "score": ceremony_for(row.proposal).to_dict(),
                               "history": [{"level": h.level, "score_level": h.score_level, "override": h.override,
                                            "reason": h.reason, "actor": h.actor, "at": h.created_at}
                                           for h in history]}, indent=2))
        return
    if level is None:
        console.print(f"{name}: ceremony {plan['level']} — {plan['reason']}", highlight=False, markup=False,
                      soft_wrap=True)
        for skipped in plan["skipped"] if isinstance(plan["skipped"], list) else []:
            console.print(f"  skips: {skipped}", highlight=False, markup=False)


def _refuse(message: str) -> None:
    make_console(stderr=True).print(f"error: {message}", highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command("ceremony")(cli_errors(ceremony))
