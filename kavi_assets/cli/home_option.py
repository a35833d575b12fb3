"""The `--home` option, and what a command opens with it: the skills home and the ledger's forge records."""

from typing import Annotated, Any

import typer

from kavi.home import KaviHome

HomeOpt = Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")]


def open_home(home: str | None) -> KaviHome:
    return KaviHome.from_env(home).ensure()


def open_records(home: KaviHome) -> Any:
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger

    return ForgeRecords(Ledger(home.ledger_path))
