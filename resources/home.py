"""The skills home as a Dagster resource: where skills, artifacts, sandboxes and the ledger live."""

import dagster as dg
from pydantic import Field

from kavi.home import KaviHome
from kavi.settings import KaviSettings


class SkillsHomeResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """The skills home; `root` unset: KAVI_HOME (read when a run starts), else ~/.kavi."""

    root: str | None = Field(default=None, description="the skills home; unset: KAVI_HOME, else ~/.kavi")

    def home(self) -> KaviHome:
        return KaviHome.from_env(self.root or None, None if self.root else KaviSettings()).ensure()
