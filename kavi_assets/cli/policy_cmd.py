"""`kavi policy show [MODULE] [--json]`: the capability map a skill is scanned against, so a person (or a model's
retry) can see what a module gives, which of its attributes are pure, and what to use instead of the rest.
Exit 0, or 2 for an unknown module or an unusable policy file."""

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kavi_assets.cli.console import make_console

console = make_console()
policy_app = typer.Typer(name="policy", help="The policy skills are scanned against.", no_args_is_help=True)
CLASSES = ("READ_ONLY", "FILE_WRITE", "NETWORK", "SECRET_READ")


def _verdict(entry: Any) -> str:
    return f"needs {entry.needs}" if entry.verdict == "needs" else str(entry.verdict)


def module_doc(policy: Any, module: str) -> dict[str, Any] | None:
    """Everything the policy decides about `module`: the entry that decides it, its verdict, the classes that may
    import it, its pure and refused attributes (each refusal with its rule, reason and allowed way)."""
    found = policy.module_entry(module)
    if found is None:
        return None
    listed, entry = found
    refused = {name: {"rule": r.rule or entry.rule, "reason": r.reason, "instead": r.instead or entry.instead}
               for name, r in entry.refuse.items()}
    return {
        "module": module,
        "decided_by": listed,
        "verdict": _verdict(entry),
        "reason": entry.reason,
        "rule": entry.rule if entry.verdict != "pure" or refused else None,
        "instead": entry.instead or None,
        "importable_by": [c for c in CLASSES if policy.importable(module, c)],
        "pure_attributes": entry.pure,
        "refused_attributes": refused,
        "refused_on_values": {name: {"reason": r.reason, "instead": r.instead} for name, r in entry.objects.items()},
    }


def show(
    module: Annotated[str | None, typer.Argument(help="a module (e.g. os.path); without it, every module")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
    policy: Annotated[Path | None, typer.Option("--policy", help="a policy file that tightens the default")] = None,
) -> None:
    """Print the capability map: every module's verdict and reason, or one module's attribute-level decisions."""
    from kavi.policy.policy import PolicyError, load_policy

    err = make_console(stderr=True)
    try:
        pol = load_policy(policy)
    except PolicyError as e:
        err.print(f"error: {e}", highlight=False, markup=False)
        raise typer.Exit(2) from None
    if module is None:
        rows = [{"module": name, "verdict": _verdict(e), "reason": e.reason} for name, e in sorted(pol.modules.items())]
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
            return
        table = Table(title=f"capability map: {len(rows)} modules (kavi policy show MODULE for one)")
        for col in ("module", "verdict", "reason"):
            table.add_column(col, overflow="fold")
        for r in rows:
            table.add_row(r["module"], r["verdict"], r["reason"])
        console.print(table)
        return
    doc = module_doc(pol, module)
    if doc is None:
        err.print(f"error: {module!r} is not in the capability map: a skill may not import it (POL-IMPORT); "
                  "kavi policy show lists the modules it decides", highlight=False, markup=False)
        raise typer.Exit(2)
    if as_json:
        typer.echo(json.dumps(doc, indent=2))
        return
    inherited = f" (decided by {doc['decided_by']})" if doc["decided_by"] != module else ""
    console.print(f"{module}: {doc['verdict']}{inherited} — {doc['reason']}", highlight=False, markup=False)
    console.print("importable by: " + (", ".join(doc["importable_by"]) or "no class"), highlight=False,
                  markup=False)
    if doc["instead"]:
        console.print(f"instead: {doc['instead']}", highlight=False, markup=False)
    if doc["pure_attributes"] is not None:
        console.print("pure attributes (everything else is refused): " + ", ".join(doc["pure_attributes"]),
                      highlight=False, markup=False)
    for title, key in (("refused attributes", "refused_attributes"), ("refused on the values it returns",
                                                                      "refused_on_values")):
        if doc[key]:
            table = Table(title=f"{module}: {title}")
            for col in ("attribute", "reason", "instead"):
                table.add_column(col, overflow="fold")
            for name, r in doc[key].items():
                table.add_row(name, r["reason"], r["instead"])
            console.print(table)


policy_app.command("show")(show)


def register(app: typer.Typer) -> None:
    app.add_typer(policy_app, name="policy")
