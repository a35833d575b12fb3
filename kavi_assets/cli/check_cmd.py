"""`kavi check FILE --side-effect CLASS`: the static gates on one file. Exit 0 pass, 1 violations, 2 unusable."""

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kavi_assets.cli.console import make_console

console = make_console()
SOURCE_RULE = "SRC-ENCODING"


def check(
    file: Annotated[Path, typer.Argument(help="a skill module")],
    side_effect: Annotated[str, typer.Option("--side-effect", help="READ_ONLY, FILE_WRITE, NETWORK or SECRET_READ")],
    name: Annotated[str | None, typer.Option("--name", help="the proposal's name (checked against `name`)")] = None,
    secret: Annotated[list[str] | None, typer.Option("--secret", help="a declared secret (repeatable)")] = None,
    policy: Annotated[Path | None, typer.Option("--policy", help="a policy file that tightens the default")] = None,
) -> None:
    """Run the policy scan and the AST invariants on one skill file."""
    from kavi.policy.invariants import check_invariants
    from kavi.policy.policy import PolicyError, load_policy
    from kavi.policy.scanner import scan_source
    from kavi.proposals.bounds import BoundsError, check_regular_file
    from kavi.skills.base import SideEffectClass
    from kavi.skills.source import source_problem
    from kavi.verdicts import Violation

    err = make_console(stderr=True)
    try:
        cls = SideEffectClass(side_effect.upper())
    except ValueError:
        err.print(f"error: unknown side-effect class {side_effect!r} (READ_ONLY, FILE_WRITE, NETWORK, SECRET_READ)",
                  highlight=False, markup=False)
        raise typer.Exit(2) from None
    try:
        check_regular_file(file)  # a directory, pipe or device: one line, and nothing opened
    except BoundsError as e:
        err.print(f"error: {e}", highlight=False, markup=False)
        raise typer.Exit(2) from None
    try:
        data = file.read_bytes()
        pol = load_policy(policy)
        data.decode("utf-8")  # bytes that are no text at all: the file is unusable, as before any reading
        problem = source_problem(data)
        if problem is not None:
            # What Python would run is not what the scan would read: refused before any reading counts.
            violations = [Violation(SOURCE_RULE, 1, 0, "", f"the source {problem}", "source")]
        else:
            source = data.decode("utf-8")
            violations = scan_source(source, cls, declared_secrets=secret or [], policy=pol)
            violations += check_invariants(source, expected_class=cls, expected_name=name)
    except UnicodeDecodeError:
        err.print(f"error: {file}: not UTF-8 text", highlight=False, markup=False)
        raise typer.Exit(2) from None
    except OSError as e:
        err.print(f"error: {file}: cannot be read ({e.strerror or e})", highlight=False, markup=False)
        raise typer.Exit(2) from None
    except SyntaxError as e:
        err.print(f"error: {file}: syntax error at line {e.lineno}: {e.msg}", highlight=False, markup=False)
        raise typer.Exit(2) from None
    except PolicyError as e:
        err.print(f"error: {e}", highlight=False, markup=False)
        raise typer.Exit(2) from None
    if not violations:
        console.print(f"[green]pass[/]: {file} uses no capability beyond {cls.value}", highlight=False,
                      soft_wrap=True)
        return
    table = Table(title=f"{file}: {len(violations)} violation(s) for {cls.value}")
    for col in ("rule", "line", "source", "why", "instead"):
        table.add_column(col, overflow="fold")
    for v in violations:
        # Policy messages end with the allowed way (the same text the retry packet carries to the model).
        why, _, instead = v.why.partition("; instead: ")
        table.add_row(v.rule_id, str(v.line), v.source.strip(), why, instead)
    console.print(table)
    rules = ", ".join(sorted({v.rule_id for v in violations}))
    # The verdict line is for scripts too: never wrapped, whatever the terminal width or the file path's length.
    console.print(f"fail: {file}: {len(violations)} violation(s): {rules}", highlight=False, markup=False,
                  soft_wrap=True)
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("check")(check)
