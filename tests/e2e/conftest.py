"""One real `kavi demo` run per test session, shared by the end-to-end tests that inspect its results: the main job
from the installed wheel (tests/e2e/wheel.py). Every test that uses it is in the xdist group "demo", so a run on
several workers (`--dist loadgroup`) runs the demo once."""

from collections.abc import Iterator

import pytest

from tests.e2e.wheel import WheelDemo, demo_from_a_wheel
from tests.factories import DemoRun


@pytest.fixture(scope="session")
def wheel_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WheelDemo]:
    yield demo_from_a_wheel(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="session")
def demo_run(wheel_demo: WheelDemo) -> DemoRun:
    return wheel_demo.run
