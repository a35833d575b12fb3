"""One real `kavi demo` run per test session, shared by the end-to-end tests that inspect its results."""

import os
from collections.abc import Iterator

import pytest

from tests.factories import DemoRun, run_kavi


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoRun]:
    root = tmp_path_factory.mktemp("demo")
    home, dagster_home = root / "kavi-home", root / "dagster-home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAVI_", "DAGSTER_"))}
    env.update(KAVI_HOME=str(home), DAGSTER_HOME=str(dagster_home), KAVI_RECORDED_SPEED="0")
    proc = run_kavi(["demo"], env, timeout=900)
    yield DemoRun(home, dagster_home, env, proc.stdout + proc.stderr, proc.returncode)
