"""What the gate sandbox costs: every gate run on the shipped skills' recorded answers, with the bubblewrap
sandbox (each gate command a fresh interpreter in a world built for it alone) and, as the baseline measured in
the same run, without it (gate commands forked from the warm runner, the path taken where bubblewrap is
missing). Prints the median seconds per gate and for the whole verification, and the sandbox's own start-up
cost (`/bin/true` in the sandbox against `/bin/true` alone).

    python benchmarks/sandbox_cost.py [--runs 5] [--skills word_count,search_notes,http_get_json,write_note]
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from kavi_assets.build.allowlist import skill_path, test_path
from kavi_assets.gates.runner import GateConfig, run_gates
from kavi_assets.proposals.model import Proposal
from kavi_assets.sandbox import jail

ROOT = Path(__file__).resolve().parents[1]


def _verify(names: list[str], runs: int, mypy_cache: Path) -> tuple[dict[str, list[float]], list[float]]:
    per_gate: dict[str, list[float]] = {}
    totals: list[float] = []
    for i in range(runs + 1):
        for name in names:
            spec = yaml.safe_load((ROOT / "examples/proposals" / f"{name}.yaml").read_text())
            proposal = Proposal.model_validate(spec)
            answer = ROOT / "examples/answers" / name / "1"
            files = {skill_path(name): (answer / "skill.py").read_bytes(),
                     test_path(name): (answer / "test.py").read_bytes()}
            with tempfile.TemporaryDirectory(prefix="kavi-bench-") as work:
                out = run_gates(Path(work), proposal, files, GateConfig(mypy_cache_root=mypy_cache))
            if not out.passed:
                failed = [(r.gate, r.reason) for r in out.results if not r.ok]
                raise SystemExit(f"{name}: the recorded answer did not pass: {failed}")
            if i == 0:
                continue  # warm-up: caches, the warm runner, page cache
            totals.append(out.duration_s)
            for r in out.results:
                per_gate.setdefault(r.gate, []).append(r.duration_s)
    return per_gate, totals


def _startup(runs: int) -> tuple[float, float]:
    bare, boxed = [], []
    with tempfile.TemporaryDirectory(prefix="kavi-bench-") as work:
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run(["/bin/true"], check=True)
            bare.append(time.perf_counter() - t0)
            cmd = jail.build(Path(work), [])
            jail.hand_over([Path(work)], cmd.run_as)
            t0 = time.perf_counter()
            subprocess.run([*cmd.prefix, "/bin/true"], pass_fds=cmd.pass_fds, check=True)
            boxed.append(time.perf_counter() - t0)
            cmd.close()
    return statistics.median(bare), statistics.median(boxed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skills", default="word_count,search_notes,http_get_json,write_note")
    args = parser.parse_args()
    names = [n for n in args.skills.split(",") if n]
    problem = jail.probe()
    if problem is not None:
        raise SystemExit(f"the gate sandbox is unavailable here: {problem}")
    with tempfile.TemporaryDirectory(prefix="kavi-bench-mypy-") as cache:
        boxed_gates, boxed_total = _verify(names, args.runs, Path(cache))
        real_probe = jail.probe
        jail.probe = lambda: "switched off for the baseline"  # type: ignore[assignment]
        try:
            warm_gates, warm_total = _verify(names, args.runs, Path(cache))
        finally:
            jail.probe = real_probe  # type: ignore[assignment]
    bare, boxed = _startup(max(5, args.runs))
    print(f"gate runs on {', '.join(names)}: {args.runs} verifications each, medians in seconds")
    print(f"{'gate':<12} {'warm runner, no sandbox':>24} {'bubblewrap sandbox':>20} {'difference':>11}")
    for gate in boxed_gates:
        w, b = statistics.median(warm_gates[gate]), statistics.median(boxed_gates[gate])
        print(f"{gate:<12} {w:>24.3f} {b:>20.3f} {b - w:>+11.3f}")
    w, b = statistics.median(warm_total), statistics.median(boxed_total)
    print(f"{'verification':<12} {w:>24.3f} {b:>20.3f} {b - w:>+11.3f}")
    print(f"sandbox start-up: /bin/true {bare * 1000:.1f} ms bare, {boxed * 1000:.1f} ms in the sandbox "
          f"({(boxed - bare) * 1000:+.1f} ms)")
    print("(acceptance now runs after the builder's tests, so a verification's wall time is about "
          "pytest + acceptance, where it was the slowest of the two)")
    print(f"python: {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
