"""The Dagster UI over the demo's instance: GraphQL shows the forge assets, checks and partitions, and headless
Chromium renders the lineage page."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from demo_support import DemoRun

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _gql(url: str, query: str) -> dict[str, object]:
    req = urllib.request.Request(url + "/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        data: dict[str, object] = json.loads(resp.read())
    return data


@pytest.fixture(scope="module")
def webserver(demo_run: DemoRun) -> Iterator[str]:
    assert demo_run.returncode == 0, demo_run.stdout[-3000:]
    port = _free_port()
    exe = shutil.which("dagster-webserver", path=str(Path(sys.executable).parent)) or "dagster-webserver"
    proc = subprocess.Popen(
        [exe, "-m", "kavi_assets.definitions", "-h", "127.0.0.1", "-p", str(port)],
        env=demo_run.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(url + "/server_info", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("dagster-webserver did not answer within 90 s")
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def test_graphql_shows_assets_checks_partitions(webserver: str) -> None:
    data = _gql(webserver, """
        { assetNodes { assetKey { path }
            partitionStats { numMaterialized numPartitions numFailed }
            assetChecksOrError { ... on AssetChecks { checks { name blocking } } } } }
    """)
    nodes = {"/".join(n["assetKey"]["path"]): n for n in data["data"]["assetNodes"]}  # type: ignore[index]
    for key in ("forge/proposal", "forge/build_packet", "forge/skill_build", "forge/verification_report",
                "forge/research_note", "forge/registry_entry"):
        assert key in nodes, sorted(nodes)
    report = nodes["forge/verification_report"]
    checks = {c["name"]: c["blocking"] for c in report["assetChecksOrError"]["checks"]}
    assert checks and all(checks.values())
    assert {"gate_ruff", "gate_mypy", "gate_pytest", "gate_policy", "gate_acceptance"} <= set(checks)
    stats = nodes["forge/proposal"]["partitionStats"]
    assert stats["numPartitions"] >= 4 and stats["numMaterialized"] >= 4


def test_lineage_page_screenshot(webserver: str, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (CI installs it)")
    _gql(webserver, "mutation { setNuxSeen }")
    out = Path(os.environ.get("KAVI_SCREENSHOT_DIR", str(tmp_path))) / "lineage.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,900", "--virtual-time-budget=15000",
         f"--screenshot={out}", f"{webserver}/assets/forge/verification_report?view=lineage"],
        capture_output=True, timeout=120, check=False,
    )
    assert out.exists() and out.stat().st_size > 10_000, "the screenshot is missing or blank"
