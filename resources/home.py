"""The skills home as a Dagster resource: where skills, artifacts, sandboxes and the ledger live."""

import dagster as dg

from kavi.home import KaviHome


class SkillsHomeResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """`root` empty means KAVI_HOME (read when a run starts), else ~/.kavi."""

    root: str = ""

    def home(self) -> KaviHome:
        return KaviHome.from_env(self.root or None).ensure()
