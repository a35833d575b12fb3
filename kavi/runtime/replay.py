"""Replay: run a recorded execution's input again, only if the same trusted source would run."""

from collections.abc import Callable

from kavi.runtime.errors import ReplayRefused, SkillNotTrusted
from kavi.runtime.executor import SkillRunner
from kavi.runtime.records import ExecutionLog, ExecutionRecord

__all__ = ["ReplayRefused", "replay"]


def replay(
    runner: SkillRunner,
    log: ExecutionLog,
    id_or_prefix: str,
    *,
    confirmed: bool,
    current_hash: Callable[[str], str | None],
    session_id: str | None = None,
) -> ExecutionRecord:
    """Re-run the execution `id_or_prefix` names with its recorded input.

    A record made on a trusted version replays on that version (NAME@VERSION), whatever the latest is now.
    Refused when that version is no longer trusted or its trusted hash is not the one the original ran;
    side effects need confirmation again. The new record links to the original through `replay_of` and
    `parent_execution_id` and joins the original's session unless `session_id` is given.
    """
    original = log.find(id_or_prefix)
    name = original.skill_name if original.skill_version is None else f"{original.skill_name}@{original.skill_version}"
    if not original.input_kept:
        digest = original.input_digest
        size = f" ({digest.chars} characters, sha256 {digest.sha256[:12]})" if digest is not None else ""
        raise ReplayRefused(f"cannot replay {original.short_id}: its input was too large to keep{size}; "
                            "not replayable")
    current = current_hash(name)
    if current is None:
        raise ReplayRefused(f"cannot replay {original.short_id}: skill {name!r} is no longer trusted")
    if current.lower() != original.source_hash.lower():
        raise ReplayRefused(
            f"cannot replay {original.short_id}: skill {name!r} changed since it ran "
            f"(ran sha256 {original.source_hash[:12]}, trusted now {current.lower()[:12]}); "
            "run it afresh instead"
        )
    try:
        trusted = runner.lookup(name)
    except SkillNotTrusted:
        raise ReplayRefused(f"cannot replay {original.short_id}: skill {name!r} is no longer trusted") from None
    if trusted.sha256.lower() != original.source_hash.lower():
        raise ReplayRefused(
            f"cannot replay {original.short_id}: the runner would load {name!r} at sha256 "
            f"{trusted.sha256.lower()[:12]}, not the {original.source_hash[:12]} that ran"
        )
    data = original.input_data()
    if not isinstance(data, dict):
        raise ReplayRefused(f"cannot replay {original.short_id}: its recorded input is not a JSON object")
    return runner.run(
        name,
        data,
        confirmed=confirmed,
        parent_execution_id=original.execution_id,
        session_id=session_id or original.session_id,
        replay_of=original.execution_id,
    )
