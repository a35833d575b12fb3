"""The loop without a person, under dagster-daemon: a proposal dropped in the inbox is taken in, its first
attempt fails a real gate, the retry sensor requests the second, it passes, and model_posteriors updates."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.factories import REPO, run_kavi

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

EXAMPLES = REPO / "kavi" / "examples" / "proposals"


def test_daemon_retries_and_learns(tmp_path: Path) -> None:
    home, dagster_home = tmp_path / "home", tmp_path / "dagster"
    (home / "inbox").mkdir(parents=True)
    dagster_home.mkdir()
    (dagster_home / "dagster.yaml").write_text(
        "run_coordinator:\n  module: dagster.core.run_coordinator\n  class: QueuedRunCoordinator\n"
        "  config:\n    max_concurrent_runs: 2\ntelemetry:\n  enabled: false\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAVI_", "DAGSTER_"))}
    env.update(KAVI_HOME=str(home), DAGSTER_HOME=str(dagster_home), KAVI_RECORDED_SPEED="0")
    exe = shutil.which("dagster-daemon", path=str(Path(sys.executable).parent)) or "dagster-daemon"
    log = (tmp_path / "daemon.log").open("w")
    proc = subprocess.Popen([exe, "run", "-m", "kavi_assets.definitions"], env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp_path)
    try:
        shutil.copy(EXAMPLES / "slugify_title.yaml", home / "inbox" / "slugify_title.yaml")
        deadline = time.monotonic() + 300
        doc: dict[str, object] = {}
        while time.monotonic() < deadline:
            time.sleep(3)
            out = run_kavi(["lineage", "slugify_title", "--json"], env, timeout=60)
            if out.returncode != 0:
                continue
            doc = json.loads(out.stdout)
            attempts = doc["attempts"]
            if isinstance(attempts, list) and len(attempts) >= 2 and attempts[1]["status"] == "VERIFIED":
                break
        else:
            pytest.fail(f"no verified second attempt within 300 s: {json.dumps(doc)[:2000]}\n"
                        + (tmp_path / "daemon.log").read_text()[-3000:])
        attempts = doc["attempts"]
        assert isinstance(attempts, list)
        assert attempts[0]["failure_kind"] == "VERIFY_LINT"
        # The learner: the learning sensor materializes model_posteriors after the outcomes land.
        from dagster import AssetKey, DagsterInstance

        os.environ["DAGSTER_HOME"] = str(dagster_home)
        try:
            deadline = time.monotonic() + 120
            with DagsterInstance.get() as instance:
                while time.monotonic() < deadline:
                    ev = instance.get_latest_materialization_event(AssetKey(["forge", "model_posteriors"]))
                    if ev is not None and ev.asset_materialization is not None:
                        meta = ev.asset_materialization.metadata
                        if meta["outcomes"].value >= 2:  # type: ignore[attr-defined]
                            break
                    time.sleep(3)
                else:
                    pytest.fail("model_posteriors was not materialized with both outcomes within 120 s")
        finally:
            os.environ.pop("DAGSTER_HOME", None)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        log.close()
