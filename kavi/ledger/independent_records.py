"""Independent implementations of a proposal's spec: which model was asked, why, and what came of it."""

from collections.abc import Sequence
from dataclasses import dataclass

from kavi.ledger.artifacts import ArtifactRef
from kavi.ledger.record_base import RecordsBase, _artifacts_with_lineage, _iso_sql
from kavi.ledger.store import utcnow


@dataclass(frozen=True)
class IndependentRow:
    """A request for an independent implementation of a proposal spec (schema 7): which model, why, what came of it.

    status: OK (a usable skill module, `source_sha256`), UNUSABLE (the answer could not be used) or LLM_ERROR."""

    independent_id: str
    proposal_name: str
    spec_sha256: str
    requested_by_build: str | None
    model: str
    choice_reason: str
    endpoint: str | None
    status: str
    reason: str | None
    source_sha256: str | None
    answer_sha256: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    created_at: str | None = None


class IndependentRecords(RecordsBase):
    """Requests for independent implementations, with their artifacts."""

    def record_independent(self, row: "IndependentRow", *, artifacts: Sequence[tuple[ArtifactRef, str, str]] = ()
                           ) -> None:
        """One model call for an independent implementation, with its artifacts (ref, lineage parent, relation)."""
        now = utcnow()
        with self.ledger.connect() as con:
            con.execute(
                "INSERT INTO independents (independent_id, proposal_name, spec_sha256, requested_by_build, model, "
                "choice_reason, endpoint, status, reason, source_sha256, answer_sha256, prompt_tokens, "
                "completion_tokens, latency_ms, cost_usd, created_at) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [row.independent_id, row.proposal_name, row.spec_sha256, row.requested_by_build, row.model,
                 row.choice_reason, row.endpoint, row.status, row.reason, row.source_sha256, row.answer_sha256,
                 row.prompt_tokens, row.completion_tokens, row.latency_ms, row.cost_usd, now])
            _artifacts_with_lineage(con, artifacts, row.requested_by_build, row.proposal_name, now)

    def independents(self, name: str, spec_sha256: str | None = None) -> list["IndependentRow"]:
        """NAME's independent implementation requests (of one spec, when given), oldest first."""
        where, params = "proposal_name = ?", [name]
        if spec_sha256 is not None:
            where += " AND spec_sha256 = ?"
            params.append(spec_sha256)
        with self.ledger.connect() as con:
            rows = con.execute(
                "SELECT independent_id, proposal_name, spec_sha256, requested_by_build, model, choice_reason, "
                "endpoint, status, reason, source_sha256, answer_sha256, prompt_tokens, completion_tokens, latency_ms, "
                f"cost_usd, {_iso_sql('created_at')} FROM independents WHERE {where} ORDER BY created_at",
                params).fetchall()
        return [IndependentRow(*r) for r in rows]
