"""What `--json` prints: one JSON document on stdout."""

import json
from typing import Any

import typer


def print_json(data: Any) -> None:
    if isinstance(data, list) and len(data) > 100:
        # A long listing: one compact object per line, through json's C encoder (its indented output runs in pure
        # Python, too slow for a listing of thousands of proposals); still one record per line.
        typer.echo("[\n" + ",\n".join("  " + json.dumps(row, default=str) for row in data) + "\n]")
        return
    typer.echo(json.dumps(data, indent=2, default=str))
