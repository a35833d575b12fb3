"""Shared fixtures: a fresh skills home per test, a valid proposal to mutate, the word_count spec, and the scripted
model endpoint (tests.stub_model)."""

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kavi.home import KaviHome
from tests import factories
from tests.stub_model import stub_ctx, stub_endpoint

__all__ = ["stub_ctx", "stub_endpoint"]

# A pytest-xdist worker starts with COLUMNS=80 in its environment (a serial run has none), and the CLI's consoles,
# built when their modules are imported, would take it as the width of every table: drop it, as a serial run has it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
# The room the forge sets aside in a home for a full disk (two blocks of 8 MiB) would be allocated in each of the
# suite's thousand homes: none here. The full-disk tests (tests/kavi_assets/cli/test_full_disk.py) set it back.
os.environ.setdefault("KAVI_DISK_RESERVE_MB", "0")

# The modules whose tests inspect the one shared `kavi demo` run (tests/e2e/conftest.py): with `--dist loadgroup`
# they all go to one worker, so the demo runs once. xdist's own loadgroup (an `xdist_group` mark, written as a
# suffix into each test's node id) no longer takes effect under pytest 9.2, so the group is given to the scheduler
# here, by module.
DEMO_MODULES = ("tests/e2e/test_demo.py::", "tests/e2e/test_browser.py::", "tests/e2e/test_wheel_demo.py::")
# The scale tests share one set of services per worker (tests/lake_support.py): one unit too, so one worker starts them.
SCALE_TESTS = "tests/kavi/scale/"


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: without the plugin it is never called
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With `--dist loadgroup`: tests spread one by one as with `--dist load`, the shared demo's modules as one unit
    and the scale tests as another (xdist hands out the larger units first)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class DemoGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(DEMO_MODULES):
                return "demo"
            return "scale" if nodeid.startswith(SCALE_TESTS) else nodeid

    return DemoGroupScheduling(config, log)


@pytest.fixture()
def kavi_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KaviHome]:
    home = KaviHome(tmp_path / "home").ensure()
    # The forge keeps its mypy cache in the home (cache/mypy): start from a warmed one, as after a first verification.
    factories.warm_mypy_cache_root(home.root / "cache" / "mypy")
    monkeypatch.setenv("KAVI_HOME", str(home.root))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    (tmp_path / "dagster").mkdir()
    # And its ledger and Dagster storage as a first command leaves them (created once per test process).
    factories.as_first_opened(home, tmp_path / "dagster",
                              ledger=os.environ.get("KAVI_TEST_LEDGER", "") != "ducklake")
    monkeypatch.setenv("KAVI_RECORDED_SPEED", "0")
    yield home


@pytest.fixture()
def proposal_data() -> dict[str, Any]:
    return {
        "name": "word_count",
        "description": "Count the words in a text, splitting on whitespace.",
        "inputs": [{"name": "text", "type": "str"}],
        "outputs": [{"name": "count", "type": "int"}],
        "side_effect_class": "READ_ONLY",
        "examples": [{"input": {"text": "a b c"}, "expected": {"count": 3}}],
        "holdout_examples": [{"input": {"text": ""}, "expected": {"count": 0}}],
    }


@pytest.fixture(scope="session")
def word_count_spec() -> Callable[..., dict[str, Any]]:
    """The shipped word_count answer's proposal (tests.factories.word_count_spec), with fields replaced at will."""
    return factories.word_count_spec


# The shared ledger (DuckLake) instead of the ledger file, for every test, when KAVI_TEST_LEDGER=ducklake.
@pytest.fixture(scope="session")
def lake_cluster() -> Iterator[Any]:
    from tests.lake_support import start_cluster

    yield from start_cluster()


@pytest.fixture(autouse=True)
def _ledger_backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                    monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if os.environ.get("KAVI_TEST_LEDGER", "") != "ducklake":
        yield
        return
    if request.node.get_closest_marker("ledger_file") is not None:
        pytest.skip("about the local ledger file itself (KAVI_TEST_LEDGER=ducklake)")
    from kavi.ledger.lake import close_lakes
    from tests.lake_support import new_lake

    for key, value in new_lake(request.getfixturevalue("lake_cluster"), tmp_path_factory.mktemp("lake")).items():
        monkeypatch.setenv(key, value)
    yield
    close_lakes()
