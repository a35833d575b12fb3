"""The DuckDB ledger as a Dagster resource: short-lived connections, retried on the one-writer lock."""

import dagster as dg
from pydantic import Field

from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from resources.home import SkillsHomeResource


class LedgerResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    home: SkillsHomeResource
    lock_timeout_s: float = Field(default=60.0, description="how long to wait for another writer")

    def ledger(self) -> Ledger:
        return Ledger(self.home.home().ledger_path, lock_timeout_s=self.lock_timeout_s)

    def records(self) -> ForgeRecords:
        return ForgeRecords(self.ledger())
