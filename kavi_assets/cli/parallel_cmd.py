"""`kavi forge --all [--concurrency N]`: every proposal with an attempt to make, forged through Dagster's queue."""

import time
from typing import Any

from rich.markup import escape

from kavi_assets.cli.console import make_console
from kavi_assets.cli.outcome import EXIT_OK, EXIT_USAGE, EXIT_VERDICT, verdict_text
from kavi_assets.home import KaviHome

_PASSING = ("VERIFIED", "TRUSTED")


def forge_all(h: KaviHome, name: str | None, *, as_json: bool, concurrency: int | None, all_: bool) -> int:
    """Exit status 0 when every attempt verified (or nothing was left to forge), 1 when one did not or a step
    crashed, 2 for a usage error (NAME with --all, neither, a bad --concurrency)."""
    from kavi_assets.cli.parallel import QueuedForge, forge_queued, forgeable, queue_settings

    out, err = make_console(), make_console(stderr=True)
    if all_ == (name is not None):
        err.print("[red]error:[/] give a proposal NAME or --all, not both and not neither", highlight=False)
        return EXIT_USAGE
    if concurrency is not None and not all_:
        err.print("[red]error:[/] --concurrency goes with --all", highlight=False)
        return EXIT_USAGE
    settings = queue_settings(concurrency)
    names = forgeable(h)
    if not names:
        if as_json:
            out.print_json(data=[])
        else:
            out.print("nothing to forge: no PROPOSED or FAILED proposal", highlight=False)
        return EXIT_OK
    started = time.monotonic()
    if not as_json:
        limit = f", {settings.endpoint_limit} per model endpoint" if settings.endpoint_limit else ""
        out.print(f"forging {len(names)} proposal(s) through the Dagster queue, {settings.max_runs} at once{limit}",
                  highlight=False)
    outs = forge_queued(h, [QueuedForge(n, {"kavi/trigger": "cli-all"}) for n in names], settings)
    if as_json:
        import json

        print(json.dumps(outs, indent=2, default=str))
        return EXIT_OK
    return _print(outs, time.monotonic() - started, out, err)


def _print(outs: list[dict[str, Any]], wall: float, out: Any, err: Any) -> int:
    bad = 0
    for o in outs:
        for e in o["errors"]:
            err.print(f"  [red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
        out.print(f"  {o['name']:22} attempt {o['attempt']}  {o['model'] or '':18} → {verdict_text(o)}",
                  highlight=False, soft_wrap=True)
        bad += o["status"] not in _PASSING or bool(o["errors"])
    out.print(f"{len(outs)} forged in {wall:.1f}s ({len(outs) / max(wall, 1e-9) * 60:.1f}/min); "
              f"{len(outs) - bad} verified", highlight=False)
    return EXIT_VERDICT if bad else EXIT_OK
