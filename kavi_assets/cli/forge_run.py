"""One forge attempt of a proposal through Dagster, and what it came to, read from the ledger."""

from dataclasses import dataclass
from typing import Any

from kavi.home import KaviHome
from kavi_assets.cli.console import make_console
from kavi_assets.cli.home_option import open_records


@dataclass(frozen=True)
class _FinishedElsewhere:
    """The run of an attempt another process made while this one waited (its outcome is read from the ledger)."""

    run_id: str
    success: bool = True
    errors: tuple[str, ...] = ()


def forge_once(h: KaviHome, name: str, *, tags: dict[str, str] | None = None,
               resources: dict[str, Any] | None = None, again: bool = True) -> dict[str, Any]:
    """Materialize the forge group for one partition through Dagster, then read the outcome from the ledger.

    When another attempt of NAME is running, this waits for it; then, unless `again`, it makes no attempt of its own
    and returns that attempt's outcome (`waited_for` names its run): a waiting forge does not pay twice."""
    from kavi.forge.locks import attempt_lock
    from kavi.settings import validate_config
    from kavi_assets.cli.dagster_env import (
        DiskFullDuringRun,
        add_partition,
        ensure_dagster_home,
        run_job,
        sweep_before_launch,
    )

    validate_config()  # a bad KAVI_* setting is one line and exit 2 here, not a crashed step inside the run
    ensure_dagster_home(h)
    from kavi.forge.packet import refuse_if_decomposed

    records = open_records(h)
    refuse_if_decomposed(records.require_proposal(name))
    add_partition(name)
    sweep_before_launch(h)  # runs of killed processes would hold queue slots and leave attempts open
    # One attempt of a proposal at a time (the run takes the same lock again): wait for a running attempt to
    # finish, bounded by $KAVI_FORGE_WAIT_S, else say who is forging it.
    waited: list[str | None] = []  # the latest attempt's build id when the wait began

    def on_wait(busy: Any) -> None:
        before = records.latest_build(name)
        waited.append(before.build_id if before is not None else None)
        then = ("then forges a new attempt (--again)" if again else
                "when it finishes, this command reports that attempt's verdict (--again forges a new one after it)")
        make_console(stderr=True).print(f"waiting: {busy.waiting_message()}; {then}", highlight=False, markup=False)

    with attempt_lock(h, name, on_wait=on_wait):
        latest = records.latest_build(name) if waited and not again else None
        # Only an attempt made while this waited is reported (a holder that died before building made none).
        if latest is not None and latest.run_id and latest.build_id != waited[0]:
            return {**forge_outcome(h, records, name, _FinishedElsewhere(latest.run_id)), "waited_for": latest.run_id}
        try:
            run = run_job("forge", name, tags=tags, resources=resources, home=h)
        except DiskFullDuringRun as full:
            raise _cut_short(h, records, name, full) from None
        if run.errors and _disk_full(run.errors):
            # A step met a full disk and the run ended: close what it left open now, not at the next command.
            _close_after_full_disk(h, records, name, run.run_id)
    return forge_outcome(h, records, name, run)


def _disk_full(errors: list[str]) -> bool:
    from kavi.infrastructure import is_disk_full

    return any(is_disk_full(e) for e in errors)


def _close_after_full_disk(h: KaviHome, records: Any, name: str, run_id: str) -> str:
    """Give back the room set aside and close the attempt `run_id` left open (as INFRASTRUCTURE), so no sweep is
    needed; returns what became of the attempt, in a few words ("" when the run left none)."""
    from kavi.forge.recovery import close_cut_short

    h.release_reserve()
    try:
        close_cut_short(h, records, name, run_id, "the disk is full")
        build = _build_of_run(records, name, run_id)
    except Exception as err:  # the ledger is on the full disk too: the next command's sweep closes the attempt
        return f"its attempt is still open ({type(err).__name__}); the next kavi forge closes it"
    if build is None:
        return ""
    return f"attempt {build.attempt_number} closed as {build.failure_kind or build.status}, not charged to the model"


def _cut_short(h: KaviHome, records: Any, name: str, full: Any) -> Exception:
    """Dagster's storage met a full disk mid-run: close what the run left open (its attempt, and the run as failed)
    and say it in one line."""
    from kavi.infrastructure import DISK_FULL_FIX, EnvironmentFailure
    from kavi_assets.cli.dagster_env import close_run_failed

    attempt = _close_after_full_disk(h, records, name, full.run_id)
    said = [attempt] if attempt else []
    said.append(f"run {full.run_id[:8]} " + ("marked failed" if close_run_failed(full.run_id) else
                                             "left STARTED (kavi doctor --fix marks it failed)"))
    return EnvironmentFailure(f"the disk is full: {DISK_FULL_FIX} ({'; '.join(said)})")


def forge_outcome(h: KaviHome, records: Any, name: str, run: Any, refresh_registry: bool = True) -> dict[str, Any]:
    """What one forge run came to, read from the ledger (the run's own attempt), as `kavi forge --json` prints it.
    Without `refresh_registry` the caller rewrites the registry file itself (once for a batch)."""
    from kavi_assets.cli.outcome import research_details

    row = records.require_proposal(name)
    build = _build_of_run(records, name, run.run_id)
    if row.status.value == "TRUSTED" and refresh_registry:
        # The forge run does not rewrite the registry projection (see pipeline.promote): the command that
        # promoted does, as `kavi approve` and `kavi demo` do, so the file is current when the command returns.
        from kavi.promotion.registry import refresh_registry_file

        refresh_registry_file(records, h.registry_path)
    return {
        "name": name,
        "errors": run.errors,
        "run_id": run.run_id,
        "run_success": run.success,
        "status": row.status.value,
        "attempt": build.attempt_number if build else 0,
        "build_id": build.build_id if build else None,
        "model": build.model if build else None,
        "failure_kind": build.failure_kind if build else None,
        "trusted_version": row.trusted_version,
        "infrastructure": _infrastructure_cause(records, name, build) if build else None,
        "widening": _widening(h, name, build) if build and row.status.value == "VERIFIED" and row.trusted_version
        else [],
        **(research_details(records, h, name, build) if build else {}),
    }


def _widening(h: KaviHome, name: str, build: Any) -> list[str]:
    """What a verified build reaches beyond the trusted version (why it waits for a person's approval)."""
    from kavi.forge.context import ForgeContext
    from kavi.forge.surfaces import widened_surface

    def no_model() -> Any:
        raise RuntimeError("reading a build's surface calls no model")

    return widened_surface(ForgeContext.open(h, no_model), name, build)


def _build_of_run(records: Any, name: str, run_id: str) -> Any:
    """The attempt this run made (not the latest one: another run may have made a newer attempt since)."""
    from kavi.ledger.records import LedgerRecordError

    try:
        return records.build_for_run(name, run_id)
    except LedgerRecordError:
        return None


def _infrastructure_cause(records: Any, name: str, build: Any) -> str | None:
    """For an INFRASTRUCTURE failure, what went wrong in the forge's own environment (one line)."""
    if build.failure_kind != "INFRASTRUCTURE":
        return None
    note = next((n for n in reversed(records.research_notes(name)) if n["build_id"] == build.build_id), None)
    causes = (note or {}).get("facts", {}).get("infrastructure") or {}
    return "; ".join(str(c) for c in causes.values())[:600] or "the forge's own environment failed"

