"""Cold-start time of the `kavi` CLI, beside a bare Python start, measured in the same run.

Run: python benchmarks/cli_cold_start.py [--runs N]
Each command is a fresh process; the table gives the median and the slowest of N runs.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def measure(argv: list[str], runs: int, env: dict[str, str]) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=False)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="kavi-cold-")
    env = dict(os.environ, KAVI_HOME=home, DAGSTER_HOME=os.path.join(home, "dagster"))
    rows = [
        ("python -c pass (baseline)", [sys.executable, "-c", "pass"]),
        ("kavi --help", [sys.executable, "-m", "kavi_assets.cli", "--help"]),
        ("kavi status (empty home)", [sys.executable, "-m", "kavi_assets.cli", "status", "--json"]),
        ("kavi tail (empty log)", [sys.executable, "-m", "kavi_assets.cli", "tail", "--json"]),
    ]
    print(f"CLI cold start, {args.runs} runs each (milliseconds)")
    print(f"{'command':34} {'p50':>8} {'max':>8} {'over baseline':>14}")
    base = None
    for label, argv in rows:
        p50, worst = measure(argv, args.runs, env)
        base = p50 if base is None else base
        print(f"{label:34} {p50:8.0f} {worst:8.0f} {p50 - base:14.0f}")


if __name__ == "__main__":
    main()
