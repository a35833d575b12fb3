"""The forge's view of the ledger: `ForgeRecords`, composed of the records of each aggregate of the lifecycle, and
the rows, errors and helpers those records use, under the names callers import from here."""

from kavi.ledger.build_records import BuildRecords, BuildRow, new_build_id
from kavi.ledger.independent_records import IndependentRecords, IndependentRow
from kavi.ledger.lineage_records import LineageRecords
from kavi.ledger.outcome_records import OutcomeRecords
from kavi.ledger.promotion_records import GENESIS_HASH, PromotionRecords, PromotionRow, promotion_hash
from kavi.ledger.proposal_records import ProposalRecords, ProposalRow, RevisionOutcome, RevisionRow, spec_diff
from kavi.ledger.record_base import LedgerConflictError, LedgerRecordError
from kavi.ledger.research_records import ResearchRecords
from kavi.ledger.version_records import (
    VERSION_RETIRED,
    VERSION_REVOKED,
    VERSION_SUSPECT,
    VERSION_TRUSTED,
    TrustedRecord,
    VersionRecords,
    served_statuses,
)

__all__ = [
    "GENESIS_HASH",
    "VERSION_RETIRED",
    "VERSION_REVOKED",
    "VERSION_SUSPECT",
    "VERSION_TRUSTED",
    "BuildRow",
    "ForgeRecords",
    "IndependentRow",
    "LedgerConflictError",
    "LedgerRecordError",
    "PromotionRow",
    "ProposalRow",
    "RevisionOutcome",
    "RevisionRow",
    "TrustedRecord",
    "new_build_id",
    "promotion_hash",
    "served_statuses",
    "spec_diff",
]


class ForgeRecords(ProposalRecords, BuildRecords, ResearchRecords, PromotionRecords, VersionRecords, OutcomeRecords,
                   IndependentRecords, LineageRecords):
    """The forge's view of the ledger. Each method is one unit of work: one connection, one transaction."""
