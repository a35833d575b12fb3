"""The retry sensor: a research note without escalation requests the next attempt, after a backoff."""

import json
from datetime import UTC, datetime, timedelta

import dagster as dg

from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.lifecycle import FailureKind, ProposalStatus
from kavi_assets.assets.jobs import forge_job
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource


def backoff_s(attempt: int, base_s: float, max_s: float) -> float:
    return float(min(max_s, base_s * (2 ** max(0, attempt - 1))))


def _streak(records: ForgeRecords, name: str, kind: FailureKind) -> int:
    """How many of the proposal's latest research notes in a row failed as `kind`."""
    streak = 0
    for note in reversed(records.research_notes(name)):
        if note["failure_kind"] != kind.value:
            break
        streak += 1
    return streak


@dg.sensor(
    name="retry_failed_attempts",
    job=forge_job,
    minimum_interval_seconds=5,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests the next attempt for a failed, non-escalated proposal (run key retry:NAME:ATTEMPT).",
)
def retry_failed_attempts(
    context: dg.SensorEvaluationContext, home: SkillsHomeResource, gates: GateRunnerResource
) -> dg.SensorResult | dg.SkipReason:
    records = ForgeRecords(Ledger(home.home().ledger_path))
    cursor = json.loads(context.cursor) if context.cursor else {}
    since = datetime.fromisoformat(cursor["since"]) if cursor.get("since") else None
    notes = records.research_notes_since(since)
    if not notes:
        return dg.SkipReason("no new research notes")
    now = datetime.now(UTC)
    requests: list[dg.RunRequest] = []
    skipped: list[str] = []
    # What each note's line said at the last tick: a line is logged when it changes, not every tick (the cursor
    # re-reads the latest note, and every note after one still backing off, each time).
    said: dict[str, str] = cursor.get("said", {})
    changed: list[str] = []
    now_said: dict[str, str] = {}

    def skip(key: str, line: str) -> None:
        skipped.append(line)
        now_said[key] = line
        if said.get(key) != line:
            changed.append(line)

    hold: datetime | None = None
    for note in notes:
        name, attempt = note["name"], int(note["attempt"])
        key = f"{name}:{attempt}"
        if note["escalated"]:
            skip(key, f"{name} attempt {attempt}: escalated ({', '.join(note['triggers'])}); waits for a person")
            continue
        if note["failure_kind"] == FailureKind.LLM_NOT_CONFIGURED.value:
            skip(key, f"{name} attempt {attempt}: no model endpoint for it (the recorded model answers only the "
                      f"shipped examples); set KAVI_LLM_BASE_URL and KAVI_LLM_MODELS, then kavi forge {name}")
            continue
        if note["status"] != ProposalStatus.FAILED.value or attempt != note["latest_attempt"]:
            skip(key, f"{name} attempt {attempt}: no longer the latest failure (status {note['status']})")
            continue
        kind = note["failure_kind"]
        why = ""
        if kind == FailureKind.INFRASTRUCTURE.value:
            # Not the model's failure: wait for the environment (its own, longer backoff), then try again.
            wait = backoff_s(_streak(records, name, FailureKind.INFRASTRUCTURE), gates.infra_backoff_s,
                             gates.retry_backoff_max_s)
            why = " after an infrastructure failure (not the model's)"
        elif kind == FailureKind.ENDPOINT_UNAVAILABLE.value:
            # The endpoint failed: its own backoff, doubling with each failure in a row, bounded; the research step
            # escalates a sustained outage (then this note is escalated and never reaches here).
            streak = _streak(records, name, FailureKind.ENDPOINT_UNAVAILABLE)
            wait = backoff_s(streak, gates.endpoint_backoff_s, gates.retry_backoff_max_s)
            why = (f" after an endpoint outage (not the model's; {streak} of {gates.endpoint_outage_attempts} in a "
                   "row before it waits for a person)")
        else:
            wait = backoff_s(attempt, gates.retry_backoff_s, gates.retry_backoff_max_s)
        ready_at = note["created_at"] + timedelta(seconds=wait)
        if ready_at > now:
            hold = note["created_at"] if hold is None else min(hold, note["created_at"])
            skip(key, f"{name} attempt {attempt + 1}: backing off{why} until {ready_at.isoformat()}")
            continue
        requests.append(
            dg.RunRequest(
                run_key=f"retry:{name}:{attempt + 1}",
                partition_key=name,
                tags={
                    "kavi/trigger": "retry",
                    "kavi/attempt": str(attempt + 1),
                    "kavi/parent_build": note["build_id"],
                    "kavi/reason": note["failure_kind"],
                },
            )
        )
    # Notes still backing off keep the cursor at them, so they are seen again; run keys drop duplicates.
    new_since = hold if hold is not None else notes[-1]["created_at"]
    # Only the notes this tick read are remembered: the cursor stays as small as the window it re-reads.
    context.update_cursor(json.dumps({"since": new_since.isoformat(), "said": now_said}))
    for line in changed:
        context.log.info(line)
    if not requests:
        return dg.SkipReason("; ".join(skipped) or "nothing to retry")
    return dg.SensorResult(run_requests=requests)
