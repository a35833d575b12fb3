"""`kavi`: propose, forge, inspect, approve and run skills. Every command honours KAVI_HOME and DAGSTER_HOME.
This module only builds the app from the command groups' modules; nothing imports it."""

from typing import Annotated

import typer

from kavi_assets.cli.outcome import EXIT_STATUS_HELP

app = typer.Typer(
    name="kavi",
    help="Kavi Forge: models write skills, independent gates decide, the DuckDB ledger records every step.",
    epilog=EXIT_STATUS_HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from kavi_assets import __version__

        typer.echo(f"kavi {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="print the version and exit")] = False) -> None:
    """Kavi Forge: models write skills, independent gates decide, the DuckDB ledger records every step."""


def _register_groups() -> None:
    from kavi_assets.cli import lifecycle_cmd

    lifecycle_cmd.register(app)
    try:
        from kavi_assets.cli import check_cmd

        check_cmd.register(app)
    except ImportError:
        pass
    from kavi_assets.cli import ceremony_cmd, demo_cmd, holdout_cmd, policy_cmd, reverify_cmd, runtime_cmd

    demo_cmd.register(app)
    policy_cmd.register(app)
    runtime_cmd.register(app)
    holdout_cmd.register(app)
    ceremony_cmd.register(app)
    from kavi_assets.cli import serve_cmd

    serve_cmd.register(app)
    from kavi_assets.cli import decompose_cmd

    decompose_cmd.register(app)
    reverify_cmd.register(app)
    from kavi_assets.cli import scale_cmd

    scale_cmd.register(app)


_register_groups()


def main() -> None:
    """The `kavi` command: the app, then one collection (finalizers run as at any exit) and a freeze, so the
    exit's own collections do not walk everything the command loaded again."""
    try:
        app()
    finally:
        import gc

        gc.collect()
        gc.freeze()
