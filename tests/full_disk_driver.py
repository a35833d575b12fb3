"""Runs `kavi` commands on a skills home and a Dagster home that live on a small tmpfs of their own, and fills that
disk when asked. Started by tests/kavi_assets/cli/test_full_disk.py as
`unshare -m --propagation private python -m tests.full_disk_driver SCENARIO DISK OUT`: the tmpfs is mounted in the
driver's own mount namespace, so nothing outside sees it and it goes away with the driver. What each command printed
and its exit status go to OUT/results.json.

Scenarios:
- forge: propose word_count, then `kavi forge word_count` (the test's endpoint fills the disk when the model is
  asked); then the disk is freed and status, doctor and a second forge run.
- run: forge and approve word_count on a roomy disk, run it once; then three runs on a full disk, the execution log
  padded (with blank lines, which every reader skips) so that the `started` line fits its last page and the run's
  record does not: with the room set aside, without it, and with the `started` line not fitting either.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PAGE = 4096


def kavi(args: list[str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "kavi_assets.cli", *args], capture_output=True, text=True,
                          timeout=600, check=False)
    return {"args": args, "rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def fill(disk: Path) -> None:
    """Write zeros until the disk refuses more (what a runaway log elsewhere on the disk does)."""
    for name, chunk in (("filler", 65536), ("filler-tail", 512)):  # then the last partial pages
        try:
            with open(disk / name, "ab") as fh:
                while True:
                    fh.write(b"\0" * chunk)
                    fh.flush()
        except OSError:
            pass


def free(disk: Path) -> None:
    for name in ("filler", "filler-tail"):
        (disk / name).unlink(missing_ok=True)


def pad_log(log: Path, fits: int) -> None:
    """Blank lines so that `fits` more bytes still fit the log's last page and one byte more needs a new page."""
    size = log.stat().st_size
    room = (-size) % PAGE or PAGE
    pad = (room - fits) % PAGE
    with open(log, "ab") as fh:
        fh.write(b"\n" * pad)


def line_lengths(log: Path) -> tuple[int, int]:
    """The lengths of the last `started` line and the last record (with their newlines)."""
    lines = [raw for raw in log.read_bytes().splitlines(keepends=True) if raw.strip()]
    started = [len(x) for x in lines if b'"kind":"started"' in x]
    records = [len(x) for x in lines if b'"kind":"started"' not in x]
    return started[-1], records[-1]


def main() -> None:
    scenario, disk, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", str(disk)], check=True)
    results: dict[str, Any] = {}
    proposal = os.environ["FULL_DISK_PROPOSAL"]
    results["propose"] = kavi(["propose", proposal])
    if scenario == "forge":
        (out / "ready").write_text(str(os.getpid()))  # the endpoint fills the disk through /proc/PID/root
        results["forge"] = kavi(["forge", "word_count"])
        free(disk)
        results["status"] = kavi(["status", "--json"])
        results["doctor"] = kavi(["doctor", "--json"])
        results["forge_again"] = kavi(["forge", "word_count"])
    else:
        results["forge"] = kavi(["forge", "word_count"])
        results["approve"] = kavi(["approve", "word_count", "--by", "tester"])
        run = ["run", "word_count", "--json", '{"text": "a b"}']
        results["run_roomy"] = kavi(run)
        home = Path(os.environ["KAVI_HOME"])
        log = home / "executions.jsonl"
        started, _record = line_lengths(log)
        margin = 64  # timestamps and durations vary by a few characters between runs
        for case, reserve in (("run_full_reserve", True), ("run_full_no_reserve", False)):
            if not reserve:
                for block in home.glob(".disk-reserve-*"):
                    block.unlink()
            free(disk)
            pad_log(log, started + margin)
            fill(disk)
            results[case] = kavi(run)
            results[case]["log_size"] = log.stat().st_size
            results[case]["reserves"] = sorted(p.name for p in home.glob(".disk-reserve-*"))
        free(disk)
        pad_log(log, started - margin)  # the `started` line itself needs a new page
        fill(disk)
        results["run_full_refused"] = kavi(run)
        free(disk)
        results["log"] = log.read_text()
        results["tail"] = kavi(["tail"])
        results["doctor"] = kavi(["doctor", "--json"])
    (out / "results.json").write_text(json.dumps(results))


if __name__ == "__main__":
    main()
