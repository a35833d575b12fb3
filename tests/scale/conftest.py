"""Everything here needs PostgreSQL (and the scale extra): marked `scale`, skipped with the reason when missing."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from kavi_assets.home import KaviHome

pytestmark = pytest.mark.scale


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/scale/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.scale)


@pytest.fixture()
def lake_home(lake_cluster: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KaviHome]:
    """A skills home whose ledger is a fresh DuckLake (its own catalog database, data under the home)."""
    from kavi_assets.ledger.lake import close_lakes
    from tests.lake_support import new_lake

    home = KaviHome(tmp_path / "home").ensure()
    monkeypatch.setenv("KAVI_HOME", str(home.root))
    for key, value in new_lake(lake_cluster, tmp_path).items():  # type: ignore[arg-type]
        monkeypatch.setenv(key, value)
    yield home
    close_lakes()
