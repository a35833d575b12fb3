"""Forge N dataset problems through the Dagster pipeline on the recorded model and print throughput, time per
proposal and per gate, and two correctness figures: reference solutions TRUSTED, mutants rejected.

The mutants are plausible wrong solutions the literal holdouts do not catch (see datasets.py): each one's proposal
holds only the dataset calls it gets right. The independent implementation the forge asks a second model for is
answered with the dataset's reference solution. The last line is the verdict:
`verdicts: mutants rejected X/Y, references accepted R/S`.

Run: python benchmarks/forge_throughput.py [--dataset humaneval|mbpp|both] [--limit 50|0 for all]
                                          [--workers 2] [--data DIR (reuse a datasets.py output)]
                                          [--ledger-host batch|none] [--dagster-storage kavi|dagster]
                                          [--baseline REV [--rounds 2]]
The workers are a batch: they write the ledger through one ledger host process, as `kavi forge --all` does
(`--ledger-host none`: each unit of work opens the file and takes its turn at DuckDB's lock).
`--dagster-storage dagster` runs on Dagster's own SQLite storage and run launcher instead of kavi's (the home's
dagster.yaml without kavi_assets/launcher): what that private layer carries, measured.
The recorded model replays with KAVI_RECORDED_SPEED=0 (no replayed latency): the figures are the forge's own.
`--baseline REV` (root) forges the same proposals with REV's code too (benchmarks/baseline.py), the two alternating,
and prints them side by side, with every gate result of every attempt compared; its last line is
`throughput: X proposals/min vs Y at REV ...; verdicts identical|DIFFER`.
"""

import argparse
import json
import multiprocessing
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import baseline  # noqa: E402  (benchmarks/baseline.py)
import datasets  # noqa: E402  (benchmarks/datasets.py)


def _worker(args: tuple[str, str, str, list[str], bool]) -> list[tuple[str, float]]:
    home, dagster_home, cassettes, names, auto = args
    os.environ.update(KAVI_HOME=home, DAGSTER_HOME=dagster_home, KAVI_RECORDED_SPEED="0")
    from kavi.gates.runner import prestart

    prestart()  # the gates' warm runner boots while Dagster imports
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


def forge_all(proposals: Path, cassettes: Path, names: list[str], workers: int,
              ledger_host: bool = True, dagster_own: bool = False) -> tuple[Path, float, list[float]]:
    root = Path(tempfile.mkdtemp(prefix="kavi-throughput-"))
    home, dagster_home = root / "home", root / "dagster"
    dagster_home.mkdir(parents=True)
    os.environ.update(KAVI_HOME=str(home), DAGSTER_HOME=str(dagster_home))
    from kavi.forge.context import ForgeContext
    from kavi.forge.intake import intake
    from kavi.home import KaviHome
    from kavi.proposals.model import load_proposal
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home

    h = KaviHome(home).ensure()
    ensure_dagster_home(h)
    own_yaml: str | None = None
    if dagster_own:  # the workers open the instance from this file; nothing rewrites it during the benchmark
        from kavi_assets.cli.dagster_env import dagster_own_yaml

        own_yaml = dagster_own_yaml()
        (dagster_home / "dagster.yaml").write_text(own_yaml, encoding="utf-8")
    ctx = ForgeContext.open(h, lambda: None)  # type: ignore[arg-type, return-value]
    for n in names:
        intake(ctx, load_proposal(proposals / f"{n}.json"), None)
        add_partition(n)
    # Interleaved slices: each worker gets a similar mix of problems.
    slices = [names[i::workers] for i in range(workers)]
    t0 = time.perf_counter()
    from kavi_assets.cli.parallel import batch_ledger_host

    # The workers are a batch, and write the ledger as `kavi forge --all`'s runs do: through the batch's ledger host
    # (one process holds the file), or, with --ledger-host none, each unit of work opening the file itself.
    with batch_ledger_host(h.ledger_path if ledger_host else None):
        pool = multiprocessing.get_context("spawn").Pool(workers)
        try:
            results = pool.map(_worker, [(str(home), str(dagster_home), str(cassettes), s, True) for s in slices])
        finally:
            pool.close()  # not terminate(): Dagster turns SIGTERM into KeyboardInterrupt tracebacks in the workers
            pool.join()
    wall = time.perf_counter() - t0
    if own_yaml is not None and (dagster_home / "dagster.yaml").read_text(encoding="utf-8") != own_yaml:
        raise SystemExit("the benchmark's dagster.yaml was rewritten during the run: the figures are not Dagster's own")
    per = [t for r in results for _, t in r]
    return home, wall, per


def summarize(home: Path) -> tuple[dict[str, dict[str, Any]], dict[str, list[float]], list[float]]:
    import duckdb

    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        status = {r[0]: {"status": r[1]} for r in con.execute("SELECT name, status FROM proposals").fetchall()}
        for name, kind, gate, msgs in con.execute(
            "SELECT b.proposal_name, b.failure_kind, g.gate, g.messages_json FROM builds b "
            "LEFT JOIN gate_results g ON g.build_id = b.build_id AND g.effective_verdict = 'failed' "
            "ORDER BY b.proposal_name, g.gate"
        ).fetchall():
            status[name].setdefault("failures", []).append((kind, gate, json.loads(msgs) if msgs else []))
        gates: dict[str, list[float]] = defaultdict(list)
        for gate, ms in con.execute("SELECT gate, duration_ms FROM gate_results").fetchall():
            gates[gate].append(ms)
        paths = [r[0] for r in con.execute("SELECT path FROM artifacts WHERE kind = 'verification_report'").fetchall()]
    finally:
        con.close()
    verify_s = []
    for p in paths:
        try:
            verify_s.append(float(json.loads(Path(p).read_text()).get("duration_s") or 0.0))
        except (OSError, ValueError):
            continue
    return status, gates, verify_s


# Why a reference solution can fail a gate without the forge being wrong. Anything not matched here is
# printed as UNEXPLAINED: a forge bug to investigate.
EXPLANATIONS: list[tuple[str, str, str]] = [
    ("mypy", r"\[return\]",
     "the dataset's solution can fall off the end of a function declared to return a value (every path returns "
     "inside a loop, which mypy --strict cannot prove); a model would add a final return or raise"),
    ("mypy", r"\[return-value\]",
     "the dataset's own annotation does not match what the solution returns (mypy --strict is right)"),
    ("mypy", r"\[(arg-type|assignment|operator|index|union-attr|misc|var-annotated|call-overload)\]",
     "the dataset's solution is not type-correct under mypy --strict as written"),
    ("coverage", r"lines not run",
     "the dataset's shown examples never reach some branch of the reference, so the builder's tests (written "
     "from those examples) leave it unrun"),
    ("ruff", r"E501",
     "a line of the dataset's code is too long and no mechanical fix (format, docstring reflow) shortens it"),
    ("ruff", r"\b(?P<code>[A-Z]+[0-9]+)\b",
     "the dataset's code breaks lint rule {code}, which no behaviour-preserving automatic fix removes "
     "(the wrapper applies only those)"),
    ("mypy", r"\[(?P<code>[a-z-]+)\]",
     "the dataset's solution is not type-correct under mypy --strict as written ([{code}])"),
    ("resource", r"time grows as n\^(?P<growth>[0-9.]+)",
     "the dataset's solution takes super-linear time (n^{growth} fitted) on an input its schema allows, up to the "
     "largest a caller may send: a loop over the input inside a loop over it, a count or remove inside a loop, a "
     "backtracking pattern, or an output that itself grows faster than the input"),
    ("resource", r"did not finish within",
     "a call of the dataset's solution on an input its schema allows did not finish within the gate's CPU cap"),
    ("policy", r"(?P<code>POL-[A-Z-]+)",
     "the capability policy forbids what the dataset's solution does in a READ_ONLY skill ({code}); the gate "
     "applies the policy as written (if the policy is too strict there, it is the policy's to relax)"),
]


# Problems whose exception was investigated one by one.
KNOWN = {
    "mbpp_596_tuple_size": "pytest: the reference returns sys.getsizeof(...) of a list, which depends on how the "
                           "list was built (JSON loader or literal), so its own test cannot agree with the "
                           "examples; the policy also refuses `import sys` in a READ_ONLY skill",
}


def explain(failures: list[tuple[str | None, str | None, list[str]]]) -> list[str]:
    out = []
    for kind, gate, msgs in failures:
        if gate is None:
            out.append(f"UNEXPLAINED ({kind}): the attempt failed before any gate ran")
            continue
        text = " ".join(msgs)
        why = None
        for g, pat, w in EXPLANATIONS:
            m = re.search(pat, text) if g == gate else None
            if m:
                why = w.format(**m.groupdict())
                break
        first = (msgs[0] if msgs else "")[:160]
        out.append(f"{gate}: {why} -- `{first}`" if why else f"UNEXPLAINED at {gate}: `{first}`")
    return out


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def gate_verdicts(home: Path) -> dict[str, str]:
    """'proposal #attempt gate' -> that gate's effective verdict, for every gate result of every build."""
    import duckdb

    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "SELECT b.proposal_name, b.attempt_number, g.gate, g.effective_verdict FROM builds b "
            "JOIN gate_results g ON g.build_id = b.build_id").fetchall()
    finally:
        con.close()
    return {f"{name} #{attempt} {gate}": str(verdict) for name, attempt, gate, verdict in rows}


def measure(args: argparse.Namespace, data: Path) -> dict[str, Any]:
    """Forge the references, then the mutants, of `data` (a datasets.py output) with the code this process imports;
    everything the report prints, as JSON-ready values."""
    hosted = args.ledger_host == "batch"
    own = args.dagster_storage == "dagster"
    load_before = os.getloadavg()
    names = sorted(p.stem for p in (data / "proposals").glob("*.json"))
    print(f"forging {len(names)} reference answers with {args.workers} worker process(es), ledger "
          f"{'through the batch ledger host' if hosted else 'file opened by each unit of work (no host)'}, "
          f"{'Dagster' if own else 'kavi'}'s instance storage ...", flush=True)
    home, wall, per = forge_all(data / "proposals", data / "cassettes", names, args.workers, hosted, own)
    status, gates, verify_s = summarize(home)
    verdicts = gate_verdicts(home)
    mutant_names = [] if args.skip_mutants else sorted(p.stem for p in (data / "mutant-cassettes").glob("*.yaml"))
    m_wall = 0.0
    m_status: dict[str, dict[str, Any]] = {}
    if mutant_names:
        print(f"forging {len(mutant_names)} mutants ...", flush=True)
        m_home, m_wall, _ = forge_all(data / "mutant-proposals", data / "mutant-cassettes", mutant_names,
                                      args.workers, hosted, own)
        m_status, _, _ = summarize(m_home)
        verdicts.update({f"mutant {k}": v for k, v in gate_verdicts(m_home).items()})
    return {"names": names, "wall": wall, "per": per, "verify_s": verify_s, "gates": dict(gates), "status": status,
            "mutant_names": mutant_names, "m_wall": m_wall, "m_status": m_status, "verdicts": verdicts,
            "load_before": load_before[0], "load_after": os.getloadavg()[0], "code": baseline.code_in_use()}


def _verdict_line(r: dict[str, Any]) -> str:
    trusted = [n for n in r["names"] if r["status"].get(n, {}).get("status") == "TRUSTED"]
    rejected = [n for n in r["mutant_names"] if r["m_status"].get(n, {}).get("status") not in ("TRUSTED", "VERIFIED")]
    return (f"verdicts: mutants rejected {len(rejected)}/{len(r['mutant_names'])}, "
            f"references accepted {len(trusted)}/{len(r['names'])}")


def report(r: dict[str, Any], skipped: dict[str, str]) -> None:
    names, status, m_status, mutant_names = r["names"], r["status"], r["m_status"], r["mutant_names"]
    per, verify_s, gates, wall, m_wall = r["per"], r["verify_s"], r["gates"], r["wall"], r["m_wall"]
    trusted = [n for n in names if status.get(n, {}).get("status") == "TRUSTED"]
    rejected = [n for n in mutant_names if m_status.get(n, {}).get("status") not in ("TRUSTED", "VERIFIED")]
    caught_by: Counter[str] = Counter()
    how_caught: Counter[str] = Counter()
    for n in rejected:
        failed_gates = sorted({g for _, g, _ in m_status[n].get("failures", []) if g})
        caught_by.update(failed_gates)
        if "differential" in failed_gates:
            how_caught["by the generated inputs / independent implementation (differential)"] += 1
        elif any(g in ("acceptance", "pytest") for g in failed_gates):
            how_caught["by behaviour on the literal examples (acceptance/pytest)"] += 1
        else:
            how_caught["by other gates only"] += 1

    def share(part: int, whole: int) -> str:
        return f"{part}/{whole} ({100.0 * part / whole:.0f}%)" if whole else "-"

    print()
    print(f"{'figure':48} {'measured':>16} {'target':>10}")
    print(f"{'proposals per minute (reference run)':48} {len(names) / wall * 60:16.1f} {'>= 40':>10}")
    print(f"{'p50 time per proposal, whole Dagster run (s)':48} {statistics.median(per):16.2f}")
    print(f"{'p95 time per proposal, whole Dagster run (s)':48} {_pct(per, 95):16.2f}")
    print(f"{'p50 verification (all gates, concurrent) (s)':48} {statistics.median(verify_s) if verify_s else 0:16.2f}"
          f" {'<= 0.8':>10}")
    print(f"{'reference solutions TRUSTED':48} {share(len(trusted), len(names)):>16} {'100%':>10}")
    if mutant_names:
        print(f"{'mutants rejected':48} {share(len(rejected), len(mutant_names)):>16} {'100%':>10}")
        print(f"{'mutant run: proposals per minute':48} {len(mutant_names) / max(m_wall, 1e-9) * 60:16.1f}")
    print(f"\n{'gate':12} {'mean ms':>9} {'p50 ms':>9} {'p95 ms':>9}   (each gate's own duration, runs overlap)")
    for g, v in sorted(gates.items()):
        print(f"{g:12} {statistics.mean(v):9.0f} {statistics.median(v):9.0f} {_pct(v, 95):9.0f}")
    if mutant_names:
        print("\nmutants caught, by every gate that failed them: "
              + ", ".join(f"{g} {c}" for g, c in caught_by.most_common()))
        print("mutants caught " + ", ".join(f"{k}: {v}" for k, v in how_caught.most_common()))
    print(f"\nload average before {r['load_before']:.2f}, after {r['load_after']:.2f} "
          f"(1 min; {os.cpu_count()} CPUs shared with other work on this machine)")
    not_trusted = [n for n in names if n not in trusted]
    if skipped or not_trusted:
        print(f"\nproblems without a TRUSTED reference ({len(skipped) + len(not_trusted)}), each explained:")
        for tid, why in skipped.items():
            print(f"  {tid}: not converted: {why}")
        for n in not_trusted:
            st = status.get(n, {})
            reasons = ([KNOWN[n]] if n in KNOWN else explain(st.get("failures", []))) \
                or [f"UNEXPLAINED: status {st.get('status')}"]
            print(f"  {n}: {st.get('status')}: " + "; ".join(dict.fromkeys(reasons)))
    escaped = [n for n in mutant_names if n not in rejected]
    if escaped:
        print("\nmutants NOT rejected (right on every example and holdout, wrong on the dataset's other calls):")
        for n in escaped:
            print(f"  {n}")
    print()
    print(_verdict_line(r))


def compare(args: argparse.Namespace, data: Path) -> None:
    """The working tree beside `args.baseline`, alternating, `args.rounds` times each, on the same proposals."""
    def child(out: Path) -> list[str]:
        return [sys.executable, str(Path(__file__).resolve()), "--data", str(data), "--emit", str(out),
                "--workers", str(args.workers), "--ledger-host", args.ledger_host, "--dagster-storage",
                args.dagster_storage, *(["--skip-mutants"] if args.skip_mutants else [])]

    commit, _head, runs = baseline.alternate(args.baseline, args.rounds, child)
    print(f"\n{'code':30} {'round':>5} {'proposals/min':>14} {'mutants/min':>12} {'p50 verify s':>13}   verdicts")
    for run in runs:
        r = run.doc
        m_rate = len(r["mutant_names"]) / r["m_wall"] * 60 if r["m_wall"] else float("nan")
        print(f"{run.label:30} {run.round:5} {len(r['names']) / r['wall'] * 60:14.1f} {m_rate:12.1f} "
              f"{statistics.median(r['verify_s']) if r['verify_s'] else 0:13.2f}   {_verdict_line(r)[10:]}")
    base = [run.doc for run in runs if run.baseline]
    mine = [run.doc for run in runs if not run.baseline]
    diffs = _verdict_differences(base, mine)
    print("\ngate results (every gate of every attempt, references and mutants): "
          + ("identical in every run" if not diffs else f"{len(diffs)} differ"))
    for line in diffs[:40]:
        print(f"  {line}")

    def rate(rs: list[dict[str, Any]]) -> float:
        return float(statistics.median(len(r["names"]) / r["wall"] * 60 for r in rs))

    def p50(rs: list[dict[str, Any]]) -> float:
        return float(statistics.median(statistics.median(r["verify_s"]) for r in rs if r["verify_s"]))

    same = "identical" if not diffs else "DIFFER"
    print(f"\nthroughput: {rate(mine):.1f} proposals/min vs {rate(base):.1f} at {commit} (target >= 40); "
          f"p50 verification {p50(mine):.2f} vs {p50(base):.2f} s (target <= 0.8); median of {args.rounds} "
          f"round(s); verdicts {same}")


def _verdict_differences(base: list[dict[str, Any]], mine: list[dict[str, Any]]) -> list[str]:
    """Each gate result whose verdict is not the same in every run of both sides, and the verdict lines that differ."""
    out = []
    lines = {_verdict_line(r) for r in (*base, *mine)}
    if len(lines) > 1:
        out.append("verdict lines: " + " | ".join(sorted(lines)))
    keys = sorted({k for r in (*base, *mine) for k in r["verdicts"]})
    for key in keys:
        seen = [r["verdicts"].get(key, "absent") for r in (*base, *mine)]
        if len(set(seen)) > 1:
            before = "/".join(r["verdicts"].get(key, "absent") for r in base)
            after = "/".join(r["verdicts"].get(key, "absent") for r in mine)
            out.append(f"{key}: {before} (baseline) -> {after}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=["humaneval", "mbpp", "both"], default="humaneval")
    parser.add_argument("--limit", type=int, default=50, help="problems to convert (0: all 591 with --dataset both)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--skip-mutants", action="store_true")
    parser.add_argument("--ledger-host", choices=["batch", "none"], default="batch",
                        help="batch: the workers write through a ledger host, as `kavi forge --all` does (default); "
                             "none: each unit of work opens the ledger file itself, taking turns at its lock")
    parser.add_argument("--dagster-storage", choices=["kavi", "dagster"], default="kavi",
                        help="kavi: the home's dagster.yaml as kavi writes it (default); dagster: Dagster's own "
                             "SQLite storage and run launcher instead of kavi_assets/launcher's")
    baseline.add_arguments(parser, 2, "forge the same proposals (every gate result compared)")
    args = parser.parse_args()
    os.environ["KAVI_RECORDED_SPEED"] = "0"
    data = datasets.converted(args.data, args.dataset, args.limit)
    skipped = json.loads((data / "skipped.json").read_text()) if (data / "skipped.json").exists() else {}
    print(f"recorded model, KAVI_RECORDED_SPEED=0 (no replayed latency); {os.cpu_count()} CPUs; "
          f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    if args.baseline is not None and args.emit is None:
        compare(args, data)
        return
    result = measure(args, data)
    if args.emit is not None:
        args.emit.write_text(json.dumps(result), encoding="utf-8")
        return
    report(result, skipped)


if __name__ == "__main__":
    main()
