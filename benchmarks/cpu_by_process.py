"""Where a batch's CPU goes, by kind of process: `kavi forge --all --concurrency N` on HumanEval proposals (the work
of forge_parallel.py), with every process of its tree sampled from /proc while it runs.

Each process is classed by its command line: the gate jobs by the tool they run (bubblewrap's command line names
its job, so a sandbox's start counts with the job), the run workers forked from the run host by their parent. Its
CPU (user + system, every thread) is read until it ends. A process that lives less than one sampling interval is
missed, and the CPU of the last interval of each process may be: the figures are a lower bound. (The command's
getrusage total is no check: processes in sessions of their own, and those a killed daemon did not reap, never
reach it.)

Run: python benchmarks/cpu_by_process.py [--limit 48] [--concurrency 8] [--latency 5.0] [--interval 0.02]
                                          [--data DIR (a datasets.py output to reuse)] [--baseline REV [--rounds 1]]
`--baseline REV` (root) measures REV's code on the same proposals too (benchmarks/baseline.py), the two
alternating, and prints CPU-s per proposal by kind side by side (the median of the rounds).
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import baseline  # noqa: E402  (benchmarks/baseline.py)
from forge_parallel import Setup, humaneval_proposals, propose_all  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
# (what the command line holds, the kind it is counted as), first match wins.
KINDS = [
    ("kavi.gates.acceptance_runner", "gate job: acceptance, differential, resource, adequacy runs"),
    ("kavi.gates.adequacy_runner", "gate job: acceptance, differential, resource, adequacy runs"),
    ("kavi.gates.pytest_report", "gate job: pytest and coverage"),
    ("pytest", "gate job: pytest and coverage"),
    ("mypy", "gate job: mypy"),
    ("ruff", "gate job: ruff"),
    ("bwrap", "sandbox start: bubblewrap, setpriv, shell"),
    ("setpriv", "sandbox start: bubblewrap, setpriv, shell"),
    ("/bash", "sandbox start: bubblewrap, setpriv, shell"),
    ("kavi.sandbox.warm_server", "warm gate runner (its server)"),
    ("kavi.ledger.host", "ledger host (DuckDB, every process's units of work)"),
    ("kavi_assets.launcher.daemon", "dagster-daemon (the batch's queue)"),
    ("dagster-daemon", "dagster-daemon (the batch's queue)"),
    ("dagster-graphql", "run creation (dagster-graphql and its code server)"),
    ("api grpc", "run creation (dagster-graphql and its code server)"),
    ("kavi_assets.cli", "the kavi command (run creation, recorded model, outcomes)"),
]
RUN_HOST = "kavi_assets.launcher"


def _cmdline(pid: int) -> str:
    try:
        return " ".join(p.decode(errors="replace") for p in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if p)
    except OSError:
        return ""


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds so far) of a live process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


class TreeSampler:
    """Samples every descendant of `root` until stopped: the latest CPU of each process, and its kind."""

    def __init__(self, root: int, interval_s: float) -> None:
        self.root, self.interval_s = root, interval_s
        self.cpu: dict[tuple[int, str], float] = {}  # (pid, first command line seen) -> latest CPU
        self.kind: dict[tuple[int, str], str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> "TreeSampler":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        cmdlines: dict[int, str] = {}
        while not self._stop.is_set():
            parents: dict[int, int] = {}
            cpu: dict[int, float] = {}
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    st = _stat(int(entry))
                    if st is not None:
                        parents[int(entry)], cpu[int(entry)] = st
            children: dict[int, list[int]] = collections.defaultdict(list)
            for pid, ppid in parents.items():
                children[ppid].append(pid)
            tree, todo = set(), [self.root]
            while todo:  # the root and its descendants, one pass over the parent links
                pid = todo.pop()
                tree.add(pid)
                todo.extend(children.get(pid, ()))
            for pid in tree:
                if pid not in cpu:
                    continue
                line = _cmdline(pid)
                if pid not in cmdlines or (line and not cmdlines[pid]):
                    cmdlines[pid] = line
                key = (pid, cmdlines[pid])
                if key not in self.kind:
                    self.kind[key] = self._classify(pid, line, parents, cmdlines)
                self.cpu[key] = max(self.cpu.get(key, 0.0), cpu[pid])
            for pid in list(cmdlines):
                if pid not in cpu:
                    del cmdlines[pid]  # ended: a later process with this pid is another one
            self._stop.wait(self.interval_s)

    @staticmethod
    def _classify(pid: int, line: str, parents: dict[int, int], cmdlines: dict[int, str]) -> str:
        hosts = (f"-m {RUN_HOST} ", "-m kavi_assets.cli.batch_host ")
        if any(h in line + " " for h in hosts):
            parent_line = cmdlines.get(parents.get(pid, 0), "")
            if any(h in parent_line + " " for h in hosts):
                return "run workers (Dagster's run and the forge's steps, forked)"
            return "run host (imports once, forks the run workers)"
        for needle, kind in KINDS:
            if needle in line:
                return kind
        return "other"


def measure(data: Path, names: list[str], concurrency: int, latency: float, interval: float
            ) -> tuple[float, dict[str, float], dict[str, int]]:
    """(wall s, CPU s by kind, processes by kind) of one `kavi forge --all` over `names`, into a fresh home."""
    s = Setup(data, names, Path(tempfile.mkdtemp(prefix="kavi-cpu-")) / "batch", latency)
    propose_all(s)
    t0 = time.monotonic()
    cli = subprocess.Popen([sys.executable, "-m", "kavi_assets.cli", "forge", "--all", "--concurrency",
                            str(concurrency), "--json"], env=s.env(), stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(cli.pid, interval).start()
    _out, err = cli.communicate()
    sampler.stop()
    wall = time.monotonic() - t0
    if cli.returncode not in (0, 1):
        print(err[-3000:], file=sys.stderr)
        raise SystemExit(f"kavi forge --all exited with {cli.returncode}")
    by_kind: dict[str, float] = collections.defaultdict(float)
    count: collections.Counter[str] = collections.Counter()
    for key, cpu in sampler.cpu.items():
        by_kind[sampler.kind[key]] += cpu
        count[sampler.kind[key]] += 1
    return wall, dict(by_kind), dict(count)


def compare(args: argparse.Namespace, data: Path, names: list[str]) -> None:
    """CPU-s per proposal by kind with the working tree and with `args.baseline`, alternating, side by side."""
    def child(out: Path) -> list[str]:
        return [sys.executable, str(Path(__file__).resolve()), "--data", str(data), "--limit", str(len(names)),
                "--concurrency", str(args.concurrency), "--latency", str(args.latency), "--interval",
                str(args.interval), "--emit", str(out)]

    commit, _head, alternated = baseline.alternate(args.baseline, args.rounds, child)
    runs: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for run in alternated:
        runs[run.baseline].append(run.doc)
    n = len(names)

    def per(docs: list[dict[str, Any]], kind: str) -> float:
        return statistics.median(float(d["cpu"].get(kind, 0.0)) / n for d in docs)

    def total(docs: list[dict[str, Any]]) -> float:
        return float(statistics.median(sum(d["cpu"].values()) / n for d in docs))

    def rate(docs: list[dict[str, Any]]) -> float:
        return statistics.median(n / float(d["wall"]) * 60 for d in docs)

    kinds = sorted({k for d in (*runs[True], *runs[False]) for k in d["cpu"]},
                   key=lambda k: -per(runs[False], k))
    print(f"\n{n} HumanEval proposals, --concurrency {args.concurrency}, {args.latency:.1f} s per answer; CPU-s per "
          f"proposal, median of {args.rounds} round(s)\n")
    print(f"  {'kind of process':62} {commit:>12} {'working tree':>13}")
    for kind in kinds:
        print(f"  {kind:62} {per(runs[True], kind):12.2f} {per(runs[False], kind):13.2f}")
    print(f"  {'all':62} {total(runs[True]):12.2f} {total(runs[False]):13.2f}")
    print(f"  {'proposals/min':62} {rate(runs[True]):12.1f} {rate(runs[False]):13.1f}")
    print(f"\ncpu baseline: {total(runs[False]):.2f} CPU-s per proposal vs {total(runs[True]):.2f} at {commit}, "
          f"{rate(runs[False]):.1f} vs {rate(runs[True]):.1f} proposals/min")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=48)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=5.0)
    parser.add_argument("--interval", type=float, default=0.02)
    parser.add_argument("--data", type=Path, default=None)
    baseline.add_arguments(parser, 1, "measure")
    args = parser.parse_args()
    data, names = humaneval_proposals(args.data, args.limit)
    if args.baseline is not None and args.emit is None:
        compare(args, data, names)
        return
    wall, by_kind, count = measure(data, names, args.concurrency, args.latency, args.interval)
    if args.emit is not None:
        args.emit.write_text(json.dumps({"code": baseline.code_in_use(), "wall": wall, "cpu": by_kind,
                                         "procs": count}), encoding="utf-8")
        return
    sampled = sum(by_kind.values())
    n = len(names)
    print(f"{n} HumanEval proposals, --concurrency {args.concurrency}, recorded model with {args.latency:.1f} s per "
          f"answer; {os.cpu_count()} CPUs; wall {wall:.1f} s ({n / wall * 60:.1f}/min); CPU of the whole tree "
          f"{sampled:.1f} s, sampled every {args.interval * 1000:.0f} ms\n")
    print(f"  {'kind of process':62} {'procs':>6} {'CPU s':>8} {'per prop.':>9} {'share':>6}")
    for kind, cpu in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print(f"  {kind:62} {count[kind]:6} {cpu:8.1f} {cpu / n:9.2f} {cpu / max(sampled, 1e-9):6.0%}")
    print(f"\ncpu: {sampled / n:.2f} CPU-s per proposal, {n / wall * 60:.1f} proposals/min")


if __name__ == "__main__":
    main()
