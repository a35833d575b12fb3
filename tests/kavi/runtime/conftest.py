"""Fixtures for the runtime tests: a skills home with the test skills installed, a loader and a runner."""

from collections.abc import Callable
from pathlib import Path

import pytest

from kavi.home import KaviHome
from kavi.runtime.executor import SkillRunner
from kavi.runtime.http_client import FixtureHttp
from kavi.runtime.records import ExecutionLog
from kavi.runtime.trust import TrustLoader
from tests.kavi.runtime.runtime_skills import SOURCES, Registry


@pytest.fixture
def home(tmp_path: Path) -> KaviHome:
    return KaviHome(tmp_path / "home").ensure()


@pytest.fixture
def registry(home: KaviHome) -> Registry:
    reg = Registry(home)
    for name in SOURCES:
        reg.install(name)
    return reg


@pytest.fixture
def loader() -> TrustLoader:
    return TrustLoader()


@pytest.fixture
def make_runner(home: KaviHome, registry: Registry, loader: TrustLoader) -> Callable[..., SkillRunner]:
    def make(**kwargs: object) -> SkillRunner:
        options: dict[str, object] = {
            "environ": {"API_TOKEN": "s3cret-token", "OTHER_TOKEN": "never"},
            "http": FixtureHttp({"https://weather.example/api?city=Oslo": {"temp_c": -3.5}}),
            "loader": loader,
        }
        options.update(kwargs)
        return SkillRunner(home, registry.get, ExecutionLog(home.executions_log, fsync=False), **options)  # type: ignore[arg-type]

    return make


@pytest.fixture
def runner(make_runner: Callable[..., SkillRunner]) -> SkillRunner:
    return make_runner()
