"""The ledger's coach reviews and ceremony levels (schema 9), beside ForgeRecords rather than inside it.

Coach reviews live in their own table: the router's queries read `model_outcomes` only, so nothing a reviewer does
(approve, ask for changes, fail to answer) can move a builder's posterior.
"""

import json
from dataclasses import dataclass
from typing import Any

from kavi.ledger.record_base import _iso_sql
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import utcnow


@dataclass(frozen=True)
class CoachReviewRow:
    """One call of the coach model. status: APPROVE, REQUEST_CHANGES (an answer in the schema), UNUSABLE (an answer
    outside it) or LLM_ERROR (the endpoint failed)."""

    review_id: str
    proposal_name: str
    build_id: str
    builder_model: str | None
    model: str
    task_type: str
    ceremony_level: str
    status: str
    verdict: str | None
    findings: list[dict[str, Any]]
    reason: str | None
    request_sha256: str | None
    answer_sha256: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    created_at: str | None = None


@dataclass(frozen=True)
class LevelRow:
    """A person's ceremony level for a proposal: `override` when it is below the score's level (with a reason)."""

    proposal_name: str
    level: str
    score_level: str
    override: bool
    reason: str | None
    actor: str
    created_at: str


_REVIEW_COLS = ("review_id, proposal_name, build_id, builder_model, model, task_type, ceremony_level, status, verdict, "
                "findings_json, reason, request_sha256, answer_sha256, prompt_tokens, completion_tokens, latency_ms, "
                "cost_usd")


def record_review(records: ForgeRecords, row: CoachReviewRow) -> None:
    with records.ledger.connect() as con:
        con.execute(
            f"INSERT INTO coach_reviews ({_REVIEW_COLS}, created_at) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [row.review_id, row.proposal_name, row.build_id, row.builder_model, row.model, row.task_type,
             row.ceremony_level, row.status, row.verdict, json.dumps(row.findings), row.reason, row.request_sha256,
             row.answer_sha256, row.prompt_tokens, row.completion_tokens, row.latency_ms, row.cost_usd, utcnow()])


def reviews(records: ForgeRecords, name: str | None = None) -> list[CoachReviewRow]:
    """Coach reviews (of one proposal, when given), oldest first."""
    where, params = ("WHERE proposal_name = ?", [name]) if name is not None else ("", [])
    with records.ledger.connect() as con:
        rows = con.execute(f"SELECT {_REVIEW_COLS}, {_iso_sql('created_at')} FROM coach_reviews {where} "
                           "ORDER BY created_at", params).fetchall()
    out = []
    for r in rows:
        values = list(r)
        values[9] = json.loads(values[9]) if values[9] else []
        out.append(CoachReviewRow(*values))
    return out


def review_summary(records: ForgeRecords) -> list[tuple[str, str, int, int, int]]:
    """Per (coach model, task type): approvals, requests for changes, failures (no answer in the schema). The coach's
    own record, kept apart from the builder's outcomes."""
    with records.ledger.connect() as con:
        rows = con.execute(
            "SELECT model, task_type, count(*) FILTER (WHERE status = 'APPROVE'), "
            "count(*) FILTER (WHERE status = 'REQUEST_CHANGES'), "
            "count(*) FILTER (WHERE status NOT IN ('APPROVE', 'REQUEST_CHANGES')) "
            "FROM coach_reviews GROUP BY model, task_type ORDER BY model, task_type").fetchall()
    return [(str(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows]


def record_level(records: ForgeRecords, *, name: str, level: str, score_level: str, override: bool,
                 reason: str | None, actor: str) -> None:
    with records.ledger.connect() as con:
        con.execute("INSERT INTO ceremony_levels VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [name, level, score_level, override, reason, actor, utcnow()])


_LEVEL_COLS = f"proposal_name, level, score_level, override, reason, actor, {_iso_sql('created_at')}"


def _level_row(r: tuple[Any, ...]) -> LevelRow:
    return LevelRow(str(r[0]), str(r[1]), str(r[2]), bool(r[3]), r[4], str(r[5]), str(r[6]))


def levels(records: ForgeRecords, name: str) -> list[LevelRow]:
    """NAME's recorded ceremony levels, oldest first (the last one counts)."""
    with records.ledger.connect() as con:
        rows = con.execute(f"SELECT {_LEVEL_COLS} FROM ceremony_levels WHERE proposal_name = ? ORDER BY created_at",
                           [name]).fetchall()
    return [_level_row(r) for r in rows]


def latest_levels(records: ForgeRecords) -> dict[str, LevelRow]:
    """Each proposal's last recorded ceremony level (the one that counts), by proposal name."""
    with records.ledger.connect() as con:
        rows = con.execute(
            f"SELECT {_LEVEL_COLS} FROM ceremony_levels "
            "QUALIFY row_number() OVER (PARTITION BY proposal_name ORDER BY created_at DESC) = 1").fetchall()
    return {str(r[0]): _level_row(r) for r in rows}
