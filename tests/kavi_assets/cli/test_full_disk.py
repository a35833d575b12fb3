"""A full disk anywhere is one line and a closed attempt. The skills home and the Dagster home live on
a real tmpfs of 96 MiB, mounted in a mount namespace of their own (tests/full_disk_driver.py), and the disk is filled
for real: during `kavi forge` when the model is asked, and around `kavi run` with the execution log's last page
nearly full. Needs root (to mount) and `unshare`; skipped elsewhere."""

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.factories import word_count_spec
from tests.full_disk_driver import fill
from tests.stub_model import MODEL, Reply, StubEndpoint, files_answer

pytestmark = pytest.mark.slow


def _can_mount() -> str | None:
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    if shutil.which("unshare") is None:
        return "no unshare command"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "tmpfs", "/mnt"],
                           capture_output=True, text=True, check=False)
    return None if probe.returncode == 0 else f"cannot mount a tmpfs here: {probe.stderr.strip()[:200]}"


WHY_NOT = _can_mount()


def _drive(scenario: str, tmp_path: Path, stub: StubEndpoint) -> tuple[subprocess.Popen[bytes], Path, Path]:
    disk, out = tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    out.mkdir()
    proposal = tmp_path / "word_count.yaml"
    proposal.write_text(yaml.safe_dump(word_count_spec()))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAVI_", "DAGSTER_"))}
    env.update(KAVI_HOME=str(disk / "kavi-home"), DAGSTER_HOME=str(disk / "dagster-home"),
               KAVI_LLM_BASE_URL=stub.base_url, KAVI_LLM_MODELS=MODEL, KAVI_LLM_API_KEY="kavi-test-key",
               KAVI_DISK_RESERVE_MB="8", FULL_DISK_PROPOSAL=str(proposal), PYTHONPATH=str(Path.cwd()))
    proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", sys.executable, "-m",
                             "tests.full_disk_driver", scenario, str(disk), str(out)], env=env)
    return proc, disk, out


def _results(proc: subprocess.Popen[bytes], out: Path) -> dict[str, Any]:
    assert proc.wait(timeout=900) == 0
    results: dict[str, Any] = json.loads((out / "results.json").read_text())
    return results


def _one_error_line(result: dict[str, Any]) -> str:
    text = result["stdout"] + result["stderr"]
    assert "Traceback" not in text and "OperationalError" not in text, text
    errors: list[str] = [line for line in result["stderr"].splitlines() if line.startswith("error:")]
    assert len(errors) == 1, text
    return errors[0]


def _check(doctor: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in json.loads(doctor["stdout"]) if c["name"] == name)


@pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))
def test_a_disk_that_fills_during_kavi_forge_is_one_line_and_a_closed_attempt(
    tmp_path: Path, stub_endpoint: StubEndpoint,
) -> None:
    state: dict[str, Any] = {"filled": False}
    once = threading.Lock()

    def fill_then_answer(headers: dict[str, str]) -> Reply:
        with once:
            if not state["filled"]:  # the first request: the disk fills while the model "thinks"
                pid = (tmp_path / "out" / "ready").read_text()
                fill(Path(f"/proc/{pid}/root") / str(tmp_path / "disk").lstrip("/"))
                state["filled"] = True
        return files_answer()

    stub_endpoint.script(fill_then_answer)
    proc, _, out = _drive("forge", tmp_path, stub_endpoint)
    results = _results(proc, out)
    assert results["propose"]["rc"] == 0, results["propose"]
    forge = results["forge"]
    assert forge["rc"] == 3, forge  # the environment, not a verdict
    assert "the disk is full: free space on the disk that holds the skills home" in _one_error_line(forge)
    assert state["filled"]
    # Nothing is left open for the next command to sweep: the attempt is closed as INFRASTRUCTURE, the run ended.
    (row,) = json.loads(results["status"]["stdout"])
    assert row["name"] == "word_count" and row["failure_kind"] == "INFRASTRUCTURE", row
    assert _check(results["doctor"], "stale runs")["status"] == "ok", results["doctor"]["stdout"]
    assert _check(results["doctor"], "abandoned attempts")["status"] == "ok"
    # With room again, the next forge is the model's first real attempt, and it verifies.
    again = results["forge_again"]
    assert again["rc"] == 0 and "VERIFIED" in again["stdout"], again


@pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))
def test_kavi_run_on_a_full_disk_never_reports_failure_for_a_call_that_ran(
    tmp_path: Path, stub_endpoint: StubEndpoint,
) -> None:
    stub_endpoint.script(files_answer())
    proc, _, out = _drive("run", tmp_path, stub_endpoint)
    results = _results(proc, out)
    for step in ("propose", "forge", "approve", "run_roomy"):
        assert results[step]["rc"] == 0, results[step]
    def output(result: dict[str, Any]) -> Any:
        return json.loads(result["stdout"][result["stdout"].index("{"):])

    expected = output(results["run_roomy"])
    assert expected["words"] == 2
    # The `started` line fits, the record does not: the room set aside is given back and the record written.
    with_reserve = results["run_full_reserve"]
    assert with_reserve["rc"] == 0, with_reserve
    assert output(with_reserve) == expected
    assert "warning" not in with_reserve["stderr"]
    assert with_reserve["reserves"] == [".disk-reserve-2"]  # the record's first write met the full disk
    # No room set aside: the call ran and says so; only its record is missing (its `started` line is there).
    without = results["run_full_no_reserve"]
    assert without["rc"] == 0, without
    assert output(without) == expected
    assert "the call ran, but its record could not be written: " in without["stderr"]
    assert "the disk is full" in without["stderr"] and "Traceback" not in without["stderr"]
    # The `started` line does not fit: nothing runs, one line, exit 3.
    refused = results["run_full_refused"]
    assert refused["rc"] == 3, refused
    assert "the disk is full" in _one_error_line(refused) and "{" not in refused["stdout"]
    # Every line of the log is whole: no half record for the next one to be glued onto.
    lines = [line for line in results["log"].splitlines() if line.strip()]
    parsed = [json.loads(line) for line in lines]
    records = [p for p in parsed if p.get("kind") != "started"]
    assert len(records) == 2  # the roomy run's and the one written with the room set aside
    assert all(r["success"] for r in records)
    assert _check(results["doctor"], "execution log")["status"] != "fail", results["doctor"]["stdout"]
