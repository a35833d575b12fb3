"""One real `kavi demo` run per test session, shared by the end-to-end tests that inspect its results: the main job
from the installed wheel (tests/e2e/wheel.py). The modules that use it are one unit for `--dist loadgroup`
(DEMO_MODULES in tests/conftest.py), so a run on several workers runs the demo once."""

import pytest

from tests.e2e.wheel import WheelDemo, demo_from_a_wheel
from tests.factories import DemoRun


@pytest.fixture(scope="session")
def wheel_demo(tmp_path_factory: pytest.TempPathFactory) -> WheelDemo:
    return demo_from_a_wheel(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="session")
def demo_run(wheel_demo: WheelDemo) -> DemoRun:
    return wheel_demo.run
