"""Everything here needs PostgreSQL (and the scale extra): each module is marked `scale` (not in the default run) and
skips with the reason when the services or the extra are missing."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from kavi.home import KaviHome


@pytest.fixture()
def lake_home(lake_cluster: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KaviHome]:
    """A skills home whose ledger is a fresh DuckLake (its own catalog database, data under the home)."""
    from kavi.ledger.lake import close_lakes
    from tests.lake_support import new_lake

    home = KaviHome(tmp_path / "home").ensure()
    monkeypatch.setenv("KAVI_HOME", str(home.root))
    for key, value in new_lake(lake_cluster, tmp_path).items():  # type: ignore[arg-type]
        monkeypatch.setenv(key, value)
    yield home
    close_lakes()
