"""Model outcomes: how each model did at each task type, what routing and the learner read."""

from datetime import datetime
from typing import Any

from kavi.ledger.record_base import RecordsBase, _iso_sql
from kavi.ledger.store import utcnow


class OutcomeRecords(RecordsBase):
    """The outcome of every build's model call, and the sums routing reads."""

    def record_model_outcome(
        self, *, build_id: str, name: str, model: str, task_type: str, success: bool, failure_kind: str | None,
        latency_ms: float | None, tokens: int | None, cost_usd: float | None,
    ) -> None:
        with self.ledger.connect() as con:
            con.execute("DELETE FROM model_outcomes WHERE build_id = ?", [build_id])  # one outcome per build
            con.execute(
                "INSERT INTO model_outcomes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [build_id, name, model, task_type, success, failure_kind, latency_ms, tokens, cost_usd, utcnow()],
            )

    def model_outcomes(self) -> list[dict[str, Any]]:
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT build_id, proposal_name, model, task_type, success, failure_kind, latency_ms, tokens, "
                f"cost_usd, {_iso_sql('created_at')} FROM model_outcomes ORDER BY created_at"
            ).fetchall()
        return [
            {"build_id": r[0], "proposal_name": r[1], "model": r[2], "task_type": r[3], "success": r[4],
             "failure_kind": r[5], "latency_ms": r[6], "tokens": r[7], "cost_usd": r[8], "created_at": r[9]}
            for r in rows
        ]

    def outcome_summary(self) -> list[tuple[str, str, int, int, float, int, float, int]]:
        """Per (model, task type), summed by the database: successes, failures, the sum and number of non-zero
        latencies, the sum and number of costs. The learner reads these few rows, not every outcome."""
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT model, task_type, count(*) FILTER (WHERE success), count(*) FILTER (WHERE NOT success), "
                "coalesce(sum(latency_ms) FILTER (WHERE latency_ms <> 0), 0), "
                "count(latency_ms) FILTER (WHERE latency_ms <> 0), coalesce(sum(cost_usd), 0), count(cost_usd) "
                "FROM model_outcomes GROUP BY model, task_type ORDER BY min(created_at), model, task_type"
            ).fetchall()
        return [(str(r[0]), str(r[1]), int(r[2]), int(r[3]), float(r[4]), int(r[5]), float(r[6]), int(r[7]))
                for r in rows]

    def outcome_counts(self, task_type: str, as_of: datetime | None = None) -> dict[str, tuple[int, int, float | None]]:
        """Per model, for one task type: (successes, failures, mean cost), summed by the database; with
        `as_of`, only the outcomes recorded up to then."""
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT model, count(*) FILTER (WHERE success), count(*) FILTER (WHERE NOT success), "
                "sum(cost_usd), count(cost_usd) FROM model_outcomes WHERE task_type = ? "
                + ("AND created_at <= ? " if as_of is not None else "") + "GROUP BY model ORDER BY model",
                [task_type, *([as_of] if as_of is not None else [])],
            ).fetchall()
        return {str(r[0]): (int(r[1]), int(r[2]), float(r[3]) / int(r[4]) if r[4] else None) for r in rows}

    def latest_outcome_at(self) -> tuple[int, datetime | None]:
        with self.ledger.connect() as con:
            row = con.execute("SELECT count(*), max(created_at) FROM model_outcomes").fetchone()
        return (int(row[0]), row[1]) if row else (0, None)
