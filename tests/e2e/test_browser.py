"""The Dagster UI over the demo's instance: GraphQL shows the forge assets, checks and partitions, and headless
Chromium (driven over its debugging pipe) renders the screens the README's tour names: the forge lineage, a failed
partition's gate checks with the skill and the tool's messages readable, a proposal partition's status, and the
learner's posterior curves. Screenshots go to $KAVI_SCREENSHOT_DIR when it is set."""

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cdp import Browser
from tests.factories import DemoRun

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
    # The webserver of the environment the demo ran in (the installed wheel's).
    exe = shutil.which("dagster-webserver", path=str(Path(demo_run.python).parent)) or "dagster-webserver"
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
            assetChecksOrError { ... on AssetChecks { checks { name blocking partitionDefinition { type } } } } } }
    """)
    nodes = {"/".join(n["assetKey"]["path"]): n for n in data["data"]["assetNodes"]}  # type: ignore[index]
    for key in ("forge/proposal", "forge/build_packet", "forge/skill_build", "forge/verification_report",
                "forge/research_note", "forge/registry_entry"):
        assert key in nodes, sorted(nodes)
    report = nodes["forge/verification_report"]
    checks = {c["name"]: c for c in report["assetChecksOrError"]["checks"]}
    assert {"gate_ruff", "gate_mypy", "gate_pytest", "gate_policy", "gate_acceptance"} <= set(checks)
    # Scoped to the proposals' partitions (the Checks tab gets a Partitions view and a Partition column); promotion
    # is blocked by registry_entry, not by Dagster's blocking flag (whose failure is a stack trace in the UI).
    for check in checks.values():
        assert check["partitionDefinition"] is not None and not check["blocking"], check
    stats = nodes["forge/proposal"]["partitionStats"]
    assert stats["numPartitions"] >= 4 and stats["numMaterialized"] >= 4


def test_a_gate_check_is_red_only_where_a_partition_failed_it(webserver: str, demo_run: DemoRun) -> None:
    """Each gate check's partitions: failed only where the proposal's latest attempt failed that gate in the ledger;
    a gate that did not run (extract_emails' build failed before verification) is no evaluation, never a failure."""
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger

    data = _gql(webserver, """
        { assetNodes(assetKeys: [{path: ["forge", "verification_report"]}]) {
            assetChecksOrError { ... on AssetChecks { checks { name partitionStatuses {
                ... on AssetCheckDefaultPartitionStatuses { succeededPartitions failedPartitions skippedPartitions
                                                            executionFailedPartitions } } } } } } }
    """)
    [node] = data["data"]["assetNodes"]  # type: ignore[index]
    statuses = {c["name"]: c["partitionStatuses"] for c in node["assetChecksOrError"]["checks"]}
    records = ForgeRecords(Ledger(demo_run.home / "ledger.duckdb"))
    failed_in_ledger: dict[str, set[str]] = {}
    for row in records.list_status():
        build = records.latest_build(row["name"])
        for result in records.gate_results(build.build_id) if build is not None else []:
            if result["effective_verdict"] == "failed":
                failed_in_ledger.setdefault(f"gate_{result['gate']}", set()).add(row["name"])
    for check, status in statuses.items():
        assert set(status["failedPartitions"]) == failed_in_ledger.get(check, set()), (check, status)
        assert status["executionFailedPartitions"] == [], (check, status)
        assert "extract_emails" not in status["succeededPartitions"], (check, status)
    assert "extract_emails" in statuses["gate_ruff"]["skippedPartitions"], statuses["gate_ruff"]


@pytest.fixture(scope="module")
def browser(webserver: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (CI installs it)")
    _gql(webserver, "mutation { setNuxSeen }")  # the first-visit modal would cover the page
    b = Browser(chromium, tmp_path_factory.mktemp("profile"), width=1400, height=1000)
    try:
        yield b
    finally:
        b.close()


def _shot(browser: Browser, name: str, tmp_path: Path) -> Path:
    time.sleep(1.0)  # the last query's answer painted
    out = browser.screenshot(Path(os.environ.get("KAVI_SCREENSHOT_DIR", str(tmp_path))) / name)
    assert out.stat().st_size > 10_000, f"{name}: the screenshot is blank"
    return out


def test_lineage_page_screenshot(webserver: str, browser: Browser, tmp_path: Path) -> None:
    # Four steps each way from the report: the whole forge group, proposal to skill_registry.
    browser.goto(f"{webserver}/assets/forge/verification_report?view=lineage&lineageDepth=4")
    browser.wait_for_text("proposal", "build_packet", "skill_build", "verification_report", "research_note",
                          "registry_entry", "skill_registry")
    _shot(browser, "lineage.png", tmp_path)


def test_failed_partition_checks_name_the_skill_and_show_the_tool_messages(
        webserver: str, browser: Browser, tmp_path: Path) -> None:
    # slugify_title's first attempt failed ruff (F401): its evaluation is in gate_ruff's history, with the skill, the
    # attempt and the tool's own messages as text on the page (no "[Show Markdown]" to click).
    browser.goto(f"{webserver}/assets/forge/verification_report?view=checks&checkDetail=gate_ruff")
    browser.wait_for_text("Execution history", "This is a non-blocking asset check")
    assert browser.click_text("Execution history")
    page = browser.wait_for_text("ruff FAILED: 2 finding(s): F401", "slugify_title, attempt 1, build slugify_title-a1-",
                                 "F401 `string` imported but unused", "verification report")
    assert "[Show Markdown]" not in page
    assert browser.scroll_to_text("ruff FAILED: 2 finding(s)")
    _shot(browser, "checks_failed_partition.png", tmp_path)
    # The same check's Partitions view: each skill's latest verdict. No partition's latest attempt failed ruff, so
    # none is red; extract_emails (its build failed before verification: the allowlist) and email_domain_report
    # (its own attempts never reached the gates; it is trusted through its decomposition) were not evaluated:
    # skipped, not failed.
    assert browser.click_text("Partitions", selector="[role=tab]", last=True)  # the check's tab, not the asset's
    page = browser.wait_for_text("extract_emails", "slugify_title", "email_domain_report", "Skipped (2)")
    assert "Failed (" not in page.replace("Failed (0)", ""), page[:3000]
    _shot(browser, "checks_partitions.png", tmp_path)
    assert browser.click_text("extract_emails")
    browser.wait_for_text("Skipped")
    _shot(browser, "checks_partition_extract_emails.png", tmp_path)


def test_proposal_partition_shows_its_status(webserver: str, browser: Browser, tmp_path: Path) -> None:
    browser.goto(f"{webserver}/assets/forge/proposal?view=partitions&partition=extract_emails")
    page = browser.wait_for_text("status", "GATE_VIOLATION after attempt 1")
    assert "GATE_VIOLATION (GATE_VIOLATION)" not in page
    _shot(browser, "proposal_partition_status.png", tmp_path)


def test_model_posteriors_plot_is_drawn_on_the_asset_page(webserver: str, browser: Browser, tmp_path: Path) -> None:
    browser.call("Emulation.setDeviceMetricsOverride", session=True, width=1400, height=2000, deviceScaleFactor=1,
                 mobile=False)
    try:
        browser.goto(f"{webserver}/assets/forge/model_posteriors")
        browser.wait_for_text("curves READ_ONLY / simple", "won/lost", "mean (95% CI)", "recorded-coder-a")
        time.sleep(1.0)
        images = browser.js("[...document.querySelectorAll('img')].filter(i => i.src.startsWith("
                            "'data:image/svg+xml')).map(i => [i.complete, i.naturalWidth, i.width])")
        assert images and all(done and natural > 0 and shown >= 300 for done, natural, shown in images), images
        # Nothing clipped on the right: the metadata table fits its panel (no horizontal scrolling).
        overflow = browser.js("(() => { const t = [...document.querySelectorAll('table')].find(t => "
                              "t.innerText.includes('won/lost') && t.innerText.includes('Timestamp'));"
                              " return t ? t.getBoundingClientRect().width - t.parentElement.clientWidth : null; })()")
        assert overflow is not None and overflow <= 1, f"the metadata table is {overflow}px wider than its panel"
        _shot(browser, "model_posteriors.png", tmp_path)
    finally:
        browser.call("Emulation.setDeviceMetricsOverride", session=True, width=1400, height=1000,
                     deviceScaleFactor=1, mobile=False)
