"""`kavi forge --all [--concurrency N]`: every proposal with an attempt to make, forged through Dagster's queue."""

import time
from typing import Any

from rich.markup import escape

from kavi.home import KaviHome
from kavi_assets.cli.console import make_console
from kavi_assets.cli.outcome import EXIT_OK, EXIT_USAGE, EXIT_VERDICT, verdict_text

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
        # As without --json: 1 when any attempt's verdict is against it (or a step crashed).
        return EXIT_VERDICT if any(_against(o) for o in outs) else EXIT_OK
    return _print(outs, time.monotonic() - started, out, err)


def _against(o: dict[str, Any]) -> bool:
    """An attempt whose verdict is against it, or whose run had a step crash."""
    return o["status"] not in _PASSING or bool(o["errors"])


def _print(outs: list[dict[str, Any]], wall: float, out: Any, err: Any) -> int:
    bad = 0
    for o in outs:
        for e in o["errors"]:
            err.print(f"  [red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
        out.print(f"  {o['name']:22} attempt {o['attempt']}  {o['model'] or '':18} → {verdict_text(o)}",
                  highlight=False, soft_wrap=True)
        bad += _against(o)
    out.print(f"{len(outs)} forged in {wall:.1f}s ({len(outs) / max(wall, 1e-9) * 60:.1f}/min); "
              f"{len(outs) - bad} verified", highlight=False)
    return EXIT_VERDICT if bad else EXIT_OK


def demo_forging(h: KaviHome, ctx: Any, names: list[str], concurrency: int, max_rounds: int, home_res: Any,
                 gates_res: Any, console: Any) -> int:
    """`kavi demo --concurrency N`: first attempts as one batch through the queue, then each round of the retry
    sensor's requests as one batch; lines printed as the sequential demo prints them. Returns crashed steps."""
    from kavi.lifecycle import ProposalStatus
    from kavi_assets.cli.dagster_env import configure_queue, ensure_dagster_home
    from kavi_assets.cli.parallel import QueuedForge, forge_queued, queue_daemon, queue_settings
    from kavi_assets.cli.retry_sensor import retry_requests

    settings = queue_settings(concurrency)
    crashed = 0
    dagster_home = ensure_dagster_home(h)
    configure_queue(dagster_home, settings.max_runs, settings.endpoint_limit)  # read once, as the daemon starts
    with queue_daemon(dagster_home, h.ledger_path, h.root):
        first = [QueuedForge(n, {"kavi/trigger": "demo"}) for n in names
                 if ctx.records.require_proposal(n).status is ProposalStatus.PROPOSED]
        for o in forge_queued(h, first, settings, start_daemon=False) if first else []:
            crashed += _line(o, "", console)
        cursor: str | None = None
        for _ in range(max_rounds):
            requests, cursor = retry_requests(home_res, gates_res, cursor)
            if not requests:
                break
            items = [QueuedForge(str(r.partition_key), {**r.tags, "dagster/run_key": r.run_key or ""})
                     for r in requests]
            for o, r in zip(forge_queued(h, items, settings, start_daemon=False), requests, strict=True):
                crashed += _line(o, f"   [dim]requested by the retry sensor ({r.run_key})[/]", console)
    return crashed


def _line(o: dict[str, Any], suffix: str, console: Any) -> int:
    for e in o["errors"]:
        console.print(f"  [red]error:[/] {escape(str(e))}", highlight=False)
    console.print(f"  {o['name']:22} attempt {o['attempt']}  {o['model'] or '':18} → {verdict_text(o)}{suffix}",
                  highlight=False)
    return len(o["errors"])
