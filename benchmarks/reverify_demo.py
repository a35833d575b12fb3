"""How long a full re-verification of the demo's trusted skills takes: `kavi demo` in a fresh home (or --home of an
existing one), then `kavi reverify --all`, each a real process; every gate runs for real on every trusted version.

Run: python benchmarks/reverify_demo.py [--home DIR] [--runs N]
Prints the demo's trusted versions, each version's gate time, and the whole command's wall time (median of N).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def kavi(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kavi_assets.cli", *args], env=env, capture_output=True, text=True,
                          check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", help="an existing home with trusted skills (default: run kavi demo in a new one)")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    home = args.home or tempfile.mkdtemp(prefix="kavi-reverify-")
    env = dict(os.environ, KAVI_HOME=home, DAGSTER_HOME=os.path.join(home, "dagster"), KAVI_RECORDED_SPEED="0")
    if not args.home:
        t0 = time.perf_counter()
        demo = kavi(["demo"], env)
        print(f"kavi demo: exit {demo.returncode} in {time.perf_counter() - t0:.1f}s")
        if demo.returncode != 0:
            print(demo.stdout[-2000:], demo.stderr[-2000:])
            sys.exit(1)
    walls: list[float] = []
    doc: dict[str, object] = {}
    for _ in range(max(1, args.runs)):
        t0 = time.perf_counter()
        res = kavi(["reverify", "--all", "--json"], env)
        walls.append(time.perf_counter() - t0)
        if res.returncode not in (0, 1):
            print(res.stdout[-2000:], res.stderr[-2000:])
            sys.exit(1)
        doc = json.loads(res.stdout)
    results = doc["results"]
    assert isinstance(results, list)
    print(f"{'version':<28} {'verdict':<8} {'gates (s)':>9}")
    for r in results:
        print(f"{r['ref']:<28} {'passed' if r['passed'] else 'FAILED':<8} {r['duration_s']:>9.2f}")
    per = [float(r["duration_s"]) for r in results]
    print(f"{len(results)} trusted versions re-verified: gates {sum(per):.1f}s in total "
          f"(median {statistics.median(per):.2f}s per version); `kavi reverify --all` wall time "
          f"{statistics.median(walls):.1f}s (median of {len(walls)}); "
          f"fingerprint {str(doc['fingerprint']['digest'])[:12]}")  # type: ignore[index]


if __name__ == "__main__":
    main()
