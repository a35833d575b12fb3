"""Forge N dataset problems through the Dagster pipeline on the recorded model and print throughput, time per
proposal and per gate, and two correctness figures: reference solutions TRUSTED, mutants rejected.

Run: python benchmarks/forge_throughput.py [--dataset humaneval|mbpp|both] [--limit 50|0 for all]
                                          [--workers 2] [--data DIR (reuse a datasets.py output)]
"""

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _worker(args: tuple[str, str, str, list[str], bool]) -> list[tuple[str, float]]:
    home, dagster_home, cassettes, names, auto = args
    os.environ.update(KAVI_HOME=home, DAGSTER_HOME=dagster_home, KAVI_RECORDED_SPEED="0")
    from kavi_assets.cli.dagster_env import run_job
    from resources.gates import GateRunnerResource
    from resources.llm import LLMResource

    resources = {"llm": LLMResource(cassette_dir=cassettes),
                 "gates": GateRunnerResource(auto_approve=["READ_ONLY"] if auto else [])}
    out = []
    for name in names:
        t0 = time.perf_counter()
        run_job("forge", name, tags={"kavi/trigger": "benchmark"}, resources=resources)
        out.append((name, time.perf_counter() - t0))
    return out


def forge_all(data: Path, cassettes: Path, names: list[str], workers: int) -> tuple[Path, float, list[float]]:
    root = Path(tempfile.mkdtemp(prefix="kavi-throughput-"))
    home, dagster_home = root / "home", root / "dagster"
    dagster_home.mkdir(parents=True)
    os.environ.update(KAVI_HOME=str(home), DAGSTER_HOME=str(dagster_home))
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home
    from kavi_assets.forge.context import ForgeContext
    from kavi_assets.forge.pipeline import intake
    from kavi_assets.home import KaviHome
    from kavi_assets.proposals.model import load_proposal

    h = KaviHome(home).ensure()
    ensure_dagster_home(h)
    ctx = ForgeContext.open(h, lambda: None)  # type: ignore[arg-type, return-value]
    for n in names:
        intake(ctx, load_proposal(data / "proposals" / f"{n}.json"), None)
        add_partition(n)
    slices = [names[i::workers] for i in range(workers)]
    t0 = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        results = pool.map(_worker, [(str(home), str(dagster_home), str(cassettes), s, True) for s in slices])
    wall = time.perf_counter() - t0
    per = [t for r in results for _, t in r]
    return home, wall, per


def summarize(home: Path) -> tuple[dict[str, dict[str, Any]], dict[str, list[float]]]:
    import duckdb

    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        status = {r[0]: {"status": r[1]} for r in con.execute("SELECT name, status FROM proposals").fetchall()}
        for name, kind, gate, msgs in con.execute(
            "SELECT b.proposal_name, b.failure_kind, g.gate, g.messages_json FROM builds b "
            "LEFT JOIN gate_results g ON g.build_id = b.build_id AND g.effective_verdict = 'failed'"
        ).fetchall():
            status[name].setdefault("failures", []).append((kind, gate, (msgs or "")[:200]))
        gates: dict[str, list[float]] = defaultdict(list)
        for gate, ms in con.execute("SELECT gate, duration_ms FROM gate_results").fetchall():
            gates[gate].append(ms)
    finally:
        con.close()
    return status, gates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=["humaneval", "mbpp", "both"], default="humaneval")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args()
    data = args.data
    if data is None:
        data = Path(tempfile.mkdtemp(prefix="kavi-datasets-"))
        print(f"converting {args.dataset} (limit {args.limit}) into proposals and cassettes in {data} ...")
        subprocess.run([sys.executable, str(HERE / "datasets.py"), "--out", str(data), "--dataset", args.dataset,
                        "--limit", str(args.limit)], check=True)
    names = sorted(p.stem for p in (data / "proposals").glob("*.json"))
    print(f"forging {len(names)} reference answers with {args.workers} worker process(es) ...")
    home, wall, per = forge_all(data, data / "cassettes", names, args.workers)
    status, gates = summarize(home)
    trusted = [n for n in names if status.get(n, {}).get("status") == "TRUSTED"]
    mutant_names = sorted(p.stem for p in (data / "mutant-cassettes").glob("*.yaml"))
    print(f"forging {len(mutant_names)} mutants ...")
    m_home, m_wall, _ = forge_all(data, data / "mutant-cassettes", mutant_names, args.workers)
    m_status, _ = summarize(m_home)
    rejected = [n for n in mutant_names if m_status.get(n, {}).get("status") not in ("TRUSTED", "VERIFIED")]
    caught_by: Counter[str] = Counter()
    for n in rejected:
        for _, gate, _ in m_status[n].get("failures", []):
            if gate:
                caught_by[gate] += 1
    qs = statistics.quantiles(per, n=20) if len(per) >= 2 else [per[0]] * 19
    print()
    print(f"{'figure':46} {'measured':>12} {'target':>12}")
    print(f"{'proposals per minute (reference run)':46} {len(names) / wall * 60:12.1f} {'>= 40':>12}")
    print(f"{'p50 time per proposal (s)':46} {statistics.median(per):12.2f} {'':>12}")
    print(f"{'p95 time per proposal (s)':46} {qs[18]:12.2f} {'':>12}")
    print(f"{'reference solutions TRUSTED':46} {f'{len(trusted)}/{len(names)}':>12} {'100%':>12}")
    print(f"{'mutants rejected':46} {f'{len(rejected)}/{len(mutant_names)}':>12} {'100%':>12}")
    print(f"{'mutant run: proposals per minute':46} {len(mutant_names) / max(m_wall, 1e-9) * 60:12.1f}")
    print("\nmean time per gate (ms): " + ", ".join(
        f"{g} {statistics.mean(v):.0f}" for g, v in sorted(gates.items())))
    print("mutants caught by gate: " + ", ".join(f"{g} {c}" for g, c in caught_by.most_common()))
    not_trusted = [n for n in names if n not in trusted]
    if not_trusted:
        print("\nreference solutions not TRUSTED (each a forge bug or a limitation):")
        for n in not_trusted:
            fails = status.get(n, {}).get("failures", [])
            kind, gate, msg = fails[-1] if fails else ("?", "?", "")
            print(f"  {n}: {kind} at {gate}: {msg}")
    escaped = [n for n in mutant_names if n not in rejected]
    if escaped:
        print("\nmutants NOT rejected (the dataset's tests did not tell them apart, or a gate missed them):")
        for n in escaped:
            print(f"  {n}")


if __name__ == "__main__":
    main()
