"""Forge N HumanEval proposals on the recorded model with a replayed latency per answer, sequentially and with
2, 4 and 8 concurrent runs through Dagster's queue, each configuration into a fresh home; check that every
configuration reaches the same verdicts with the same attempt counts and a clean `kavi verify`, and show where the
time goes.

Configurations are entries of CONFIGS (name → function that forges the proposals into a fresh home and returns a
Result); another configuration (e.g. workers on several machines) is one more entry.

Run: python benchmarks/forge_parallel.py [--limit 50] [--configs sequential,2,4,8,8-noslots,scale2] [--latency 5.0]
                                         [--data DIR (a datasets.py output to reuse)] [--baseline REV [--rounds 2]]
`--baseline REV` (root) runs the chosen configurations with REV's code too (benchmarks/baseline.py), the two
alternating, and prints them side by side, each configuration's verdicts and attempts compared; its last line is
`parallel baseline: 8 runs X proposals/min vs Y at REV ...`.
The datasets come from benchmarks/datasets.py (KAVI_DATASETS names their folder). Last line:
`parallel: 8 runs X proposals/min vs sequential Y (Z.Zx), 5.0 s model latency`.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import baseline  # noqa: E402  (benchmarks/baseline.py)
import datasets  # noqa: E402  (benchmarks/datasets.py)


@dataclass
class Setup:
    data: Path  # a datasets.py output: proposals/ and cassettes/
    names: list[str]
    root: Path  # a fresh folder for this configuration
    latency_s: float

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KAVI_", "DAGSTER_"))}
        (self.root / "ledger-stats").mkdir(parents=True, exist_ok=True)
        env.update(KAVI_HOME=str(self.home), DAGSTER_HOME=str(self.dagster_home),
                   KAVI_RECORDED_LATENCY_S=str(self.latency_s), KAVI_RECORDED_CASSETTES=str(self.data / "cassettes"),
                   KAVI_AUTO_APPROVE="READ_ONLY", KAVI_LEDGER_STATS_DIR=str(self.root / "ledger-stats"))
        return env


@dataclass
class Result:
    elapsed_s: float
    cpu_s: float  # CPU seconds of the processes the configuration started and all their descendants
    verdicts: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    verify_ok: bool = False
    note: str = ""


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class TreeCpu:
    """CPU seconds of a process and every descendant, sampled from /proc every 0.2 s (the daemon's code server and
    run workers are reaped by processes that are themselves killed, so RUSAGE_CHILDREN misses them). A process
    living less than one sample is missed; the figure is a lower bound."""

    def __init__(self, root_pid: int) -> None:
        import threading

        self.root = root_pid
        self.seen: dict[tuple[int, int], float] = {}  # (pid, start time) → last CPU seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._tick = os.sysconf("SC_CLK_TCK")

    def _sample(self) -> None:
        parent: dict[int, int] = {}
        stat: dict[int, list[str]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                raw = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = raw[raw.rfind(")") + 2:].split()
            parent[int(entry)], stat[int(entry)] = int(fields[1]), fields
        for pid, fields in stat.items():
            p, hops = pid, 0
            while p not in (0, 1, self.root) and hops < 64:
                p, hops = parent.get(p, 0), hops + 1
            if p == self.root:
                self.seen[(pid, int(fields[19]))] = (int(fields[11]) + int(fields[12])) / self._tick

    def _loop(self) -> None:
        while not self._stop.wait(0.2):
            self._sample()

    def __enter__(self) -> "TreeCpu":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def total(self) -> float:
        return sum(self.seen.values())


def propose_all(s: Setup) -> None:
    """Record every proposal and its partition in a subprocess (not timed): the same start for every config."""
    code = ("import sys, json\nfrom pathlib import Path\n"
            "from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home\n"
            "from kavi.forge.context import ForgeContext\nfrom kavi.forge.intake import intake\n"
            "from kavi.home import KaviHome\nfrom kavi.proposals.model import load_proposal\n"
            "h = KaviHome.from_env(None).ensure(); ensure_dagster_home(h)\n"
            "ctx = ForgeContext.open(h, lambda: None)\n"
            "for p in sys.argv[1:]:\n"
            "    prop = load_proposal(Path(p)); intake(ctx, prop, None); add_partition(prop.name)\n")
    files = [str(s.data / "proposals" / f"{n}.json") for n in s.names]
    subprocess.run([sys.executable, "-c", code, *files], env=s.env(), check=True)


_SEQUENTIAL = """
import sys
from kavi_assets.cli.dagster_env import run_job
from kavi.forge.batch import ROUTING_AS_OF_TAG, batch_stamp
batch = {"kavi/trigger": "benchmark-sequential", ROUTING_AS_OF_TAG: batch_stamp()}  # as `kavi forge --all` routes
for name in sys.argv[1:]:
    run_job("forge", name, tags=batch)
"""


def run_sequential(s: Setup) -> Result:
    """One process forging one proposal after another in process: `kavi forge NAME`'s path, without paying a CLI
    start per proposal."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _SEQUENTIAL, *s.names], env=s.env())
    with TreeCpu(proc.pid) as tree:
        code = proc.wait()
    if code:
        raise SystemExit(f"the sequential forge exited {code}")
    return Result(time.perf_counter() - t0, max(_children_cpu() - cpu0, tree.total))


def run_queued(n: int, extra_env: dict[str, str] | None = None) -> Callable[[Setup], Result]:
    def run(s: Setup) -> Result:
        """`kavi forge --all --concurrency N`: the Dagster queue, a daemon the command starts, a process per run."""
        cpu0, t0 = _children_cpu(), time.perf_counter()
        cli = subprocess.Popen([sys.executable, "-m", "kavi_assets.cli", "forge", "--all", "--concurrency", str(n),
                                "--json"], env={**s.env(), **(extra_env or {})}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        with TreeCpu(cli.pid) as tree:
            stdout, stderr = cli.communicate()
        proc = subprocess.CompletedProcess(cli.args, cli.returncode, stdout, stderr)
        wall, cpu = time.perf_counter() - t0, max(_children_cpu() - cpu0, tree.total)
        errors = [e for o in (json.loads(proc.stdout) if proc.returncode == 0 else []) for e in o["errors"]]
        note = (f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}" if proc.returncode else "") \
            + (f"{len(errors)} step error(s): {errors[0][:200]}" if errors else "")
        if "lock" in proc.stderr.lower():
            note += " LOCK ERROR SHOWN TO THE USER"
        return Result(wall, cpu, note=note)
    return run


_SCALE = """
import json, sys
from pathlib import Path
from kavi_assets.cli.scale_cmd import scale_forge
settings = json.loads(sys.argv[3])
r = scale_forge(Path(sys.argv[1]), workdir=Path(sys.argv[2]), workers=2, settings=settings, promote=False,
                retry_rounds=0)
verify = r.cli_checks.get("verify", (None, None))[0]
print(json.dumps({"verdicts": r.verdicts, "per_worker": r.runs_per_worker(), "forge_s": r.forge_s,
                  "attempts": r.ledger.get("distinct_attempts"), "builds": r.ledger.get("builds"), "verify": verify}))
"""


def run_scale(s: Setup) -> Result:
    """`kavi scale-demo`'s configuration (kavi_assets/cli/scale_cmd.py): PostgreSQL, Redis and two Celery workers on
    loopback, the ledger in DuckLake. Timed from the first run launched to the last forge run finished (`forge_s`, no
    service start-up); the CPU is the whole tree's, services included. It forges the first attempts only, as the
    other configurations do (`kavi scale-demo` also runs the retry sensor's requests)."""
    folder = s.root / "proposals"
    folder.mkdir(parents=True, exist_ok=True)
    for n in s.names:
        (folder / f"{n}.json").write_bytes((s.data / "proposals" / f"{n}.json").read_bytes())
    env = s.env()
    settings = {k: env[k] for k in ("KAVI_RECORDED_LATENCY_S", "KAVI_RECORDED_CASSETTES", "KAVI_AUTO_APPROVE")}
    cpu0 = _children_cpu()
    proc = subprocess.Popen([sys.executable, "-c", _SCALE, str(folder), str(s.root / "scale"), json.dumps(settings)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with TreeCpu(proc.pid) as tree:
        stdout, stderr = proc.communicate()
    cpu = max(_children_cpu() - cpu0, tree.total)
    if proc.returncode:
        raise SystemExit(f"the scale configuration failed (exit {proc.returncode}): {stderr.strip()[-400:]}")
    doc = json.loads(stdout.strip().splitlines()[-1])
    r = Result(float(doc["forge_s"]), cpu, verdicts=dict(doc["verdicts"]), verify_ok=doc["verify"] == 0,
               note=f"runs per worker {doc['per_worker']}; {doc['attempts']} attempts ({doc['builds']} rows)")
    r.attempts = {"(all, the shared ledger)": int(doc["attempts"] or 0)}
    return r


CONFIGS: dict[str, Callable[[Setup], Result]] = {
    "sequential": run_sequential,
    "2": run_queued(2),
    "4": run_queued(4),
    "8": run_queued(8),
    # The same without gate slots (every build's gates at once, sharing the cores): what the slots change.
    "8-noslots": run_queued(8, {"KAVI_GATE_SLOTS": "0"}),
    "scale2": run_scale,  # two Celery workers, PostgreSQL, DuckLake (pip install -e '.[scale]', Debian's services)
}


def ledger_checks(s: Setup, r: Result) -> None:
    import duckdb

    con = duckdb.connect(str(s.home / "ledger.duckdb"), read_only=True)
    try:
        r.verdicts = dict(con.execute("SELECT name, status FROM proposals").fetchall())
        r.attempts = dict(con.execute("SELECT proposal_name, count(*) FROM builds GROUP BY 1").fetchall())
        dup = con.execute("SELECT count(*) FROM (SELECT proposal_name, attempt_number FROM builds GROUP BY 1, 2 "
                          "HAVING count(*) > 1)").fetchone()
    finally:
        con.close()
    if dup and dup[0]:
        r.note += f" {dup[0]} DUPLICATE ATTEMPT NUMBER(S)"
    v = subprocess.run([sys.executable, "-m", "kavi_assets.cli", "verify"], env=s.env(), capture_output=True,
                       text=True, check=False)
    r.verify_ok = v.returncode == 0


def _pct(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def breakdown(s: Setup) -> list[tuple[str, list[float]]]:
    """Seconds per proposal by stage: from Dagster's run events, the ledger's model latencies and the ledger-lock
    figures every process wrote."""
    import dagster as dg
    import duckdb

    os.environ["DAGSTER_HOME"] = str(s.dagster_home)
    stages: dict[str, list[float]] = defaultdict(list)
    with dg.DagsterInstance.get() as inst:
        for rec in inst.get_run_records(dg.RunsFilter(job_name="forge")):
            at: dict[str, float] = {}
            step_start: dict[str, float] = {}
            steps: dict[str, float] = {}
            for e in inst.all_logs(rec.dagster_run.run_id):
                ev = e.dagster_event
                if ev is None:
                    continue
                kind = ev.event_type_value
                at.setdefault(kind, e.timestamp)
                if kind == "STEP_START":
                    step_start[ev.step_key or "?"] = e.timestamp
                elif kind in ("STEP_SUCCESS", "STEP_FAILURE") and (ev.step_key or "?") in step_start:
                    steps[ev.step_key or "?"] = e.timestamp - step_start[ev.step_key or "?"]
            created = rec.create_timestamp.timestamp()
            if "PIPELINE_STARTING" in at:
                stages["queue wait (created → dequeued)"].append(at["PIPELINE_STARTING"] - at.get(
                    "PIPELINE_ENQUEUED", created))
                if "PIPELINE_START" in at:
                    stages["run start (dequeued → worker running)"].append(at["PIPELINE_START"]
                                                                           - at["PIPELINE_STARTING"])
            for key, sec in steps.items():
                stages[f"step {key}"].append(sec)
    os.environ.pop("DAGSTER_HOME", None)
    con = duckdb.connect(str(s.home / "ledger.duckdb"), read_only=True)
    try:
        for (ms,) in con.execute("SELECT latency_ms FROM builds WHERE latency_ms IS NOT NULL").fetchall():
            stages["model wait: build answer"].append(ms / 1000.0)
        for (ms,) in con.execute("SELECT latency_ms FROM independents WHERE latency_ms IS NOT NULL").fetchall():
            stages["model answer: independent (asked during the build)"].append(ms / 1000.0)
        for (ms,) in con.execute("SELECT sum(duration_ms) FROM gate_results GROUP BY build_id").fetchall():
            stages["gates (sum of gate durations)"].append(ms / 1000.0)
    finally:
        con.close()
    opens, retries, waits = 0, 0, list[float]()
    for f in (s.root / "ledger-stats").glob("*.json"):
        doc = json.loads(f.read_text())
        opens, retries, waits = opens + doc["opens"], retries + doc["retries"], waits + doc["waits_s"]
    stages[f"ledger: opening a connection ({opens} opens, {retries} lock retries)"] = waits
    return sorted(stages.items())


def humaneval_proposals(data: Path | None, limit: int) -> tuple[Path, list[str]]:
    """A datasets.py output (written now into a fresh folder unless `data` names one) and its first `limit`
    HumanEval proposals' names."""
    data = datasets.converted(data, "humaneval", limit + 10)
    return data, sorted(p.stem for p in (data / "proposals").glob("*.json"))[:limit]


def compare(args: argparse.Namespace, data: Path, names: list[str], chosen: list[str]) -> None:
    """The chosen configurations with the working tree and with `args.baseline`, alternating, `args.rounds` times
    each, on the same proposals; each run's verdicts and attempts against the first run's."""
    def child(out: Path) -> list[str]:
        return [sys.executable, str(Path(__file__).resolve()), "--data", str(data), "--limit", str(len(names)),
                "--configs", ",".join(chosen), "--latency", str(args.latency), "--emit", str(out)]

    commit, head, alternated = baseline.alternate(args.baseline, args.rounds, child)
    runs = [(run.label, run.round, run.doc) for run in alternated]
    first = runs[0][2]["results"]
    print(f"\n{'code':30} {'round':>5} {'config':>10} {'per min':>8} {'CPU s':>8} {'CPU/wall':>8} {'TRUSTED':>8} "
          f"{'attempts':>8} {'verdicts':>9}")
    rates: dict[tuple[bool, str], list[float]] = defaultdict(list)
    differ = False
    for label, k, doc in runs:
        for name, r in doc["results"].items():
            ref = first.get(name, r)
            same = r["verdicts"] == ref["verdicts"] and r["attempts"] == ref["attempts"]
            differ = differ or not same
            rate = len(names) / r["elapsed_s"] * 60
            rates[(label == head, name)].append(rate)
            trusted = sum(1 for v in r["verdicts"].values() if v == "TRUSTED")
            print(f"{label:30} {k:5} {name:>10} {rate:8.1f} {r['cpu_s']:8.1f} {r['cpu_s'] / r['elapsed_s']:8.2f} "
                  f"{trusted:8} {sum(r['attempts'].values()):8} {'same' if same else 'DIFFER':>9}"
                  + ("" if r["verify_ok"] else "  kavi verify FAILED"))
    # Each proposal whose verdict or attempt count is not the same in every run, run by run (in the order above).
    unsettled = sorted(n for n in names if len({(doc["results"][c]["verdicts"].get(n), doc["results"][c]["attempts"]
                                                 .get(n)) for _l, _k, doc in runs for c in doc["results"]}) > 1)
    for n in unsettled:
        seen = [f"{doc['results'][c]['verdicts'].get(n)} in {doc['results'][c]['attempts'].get(n)}"
                for _l, _k, doc in runs for c in doc["results"]]
        print(f"  {n}: " + " / ".join(seen))
    shown = "8" if "8" in chosen else chosen[-1]
    mine = statistics.median(rates[(True, shown)])
    theirs = statistics.median(rates[(False, shown)])
    print(f"\nparallel baseline: {shown} runs {mine:.1f} proposals/min vs {theirs:.1f} at {commit} (median of "
          f"{args.rounds} round(s), {args.latency:.1f} s model latency); verdicts and attempts "
          f"{f'DIFFER on {len(unsettled)} proposal(s)' if differ else 'the same in every run'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--configs", default="sequential,2,4,8")
    parser.add_argument("--latency", type=float, default=5.0)
    parser.add_argument("--data", type=Path, default=None)
    baseline.add_arguments(parser, 2, "run the configurations")
    args = parser.parse_args()
    chosen = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in CONFIGS]
    if unknown or not 1 <= args.limit <= 1000 or not 0 <= args.latency <= 600 or not 1 <= args.rounds <= 20:
        raise SystemExit(f"--configs from {', '.join(CONFIGS)}; --limit 1..1000; --latency 0..600; --rounds 1..20 "
                         f"({unknown})")
    data, names = humaneval_proposals(args.data, args.limit)
    if args.baseline is not None and args.emit is None:
        compare(args, data, names, chosen)
        return
    work = Path(tempfile.mkdtemp(prefix="kavi-parallel-"))
    load0 = os.getloadavg()[0]
    print(f"{len(names)} HumanEval proposals, recorded model with {args.latency:.1f} s per answer; "
          f"{os.cpu_count()} CPUs shared with other work; load average before {load0:.2f}")
    results: dict[str, Result] = {}
    setups: dict[str, Setup] = {}
    for name in chosen:
        s = Setup(data, names, work / f"cfg-{name}", args.latency)
        propose_all(s)
        print(f"  {name:>10}: forging ...", flush=True)
        r = CONFIGS[name](s)
        if not r.verdicts:  # the scale configuration reads its shared ledger itself
            ledger_checks(s, r)
        results[name], setups[name] = r, s
    if args.emit is not None:
        args.emit.write_text(json.dumps({"code": baseline.code_in_use(), "names": names, "load": load0,
                                         "results": {k: asdict(v) for k, v in results.items()}}), encoding="utf-8")
        return
    base = results.get("sequential") or next(iter(results.values()))
    print(f"\n{'config':>10} {'wall s':>8} {'per min':>8} {'speed-up':>8} {'CPU s':>8} {'CPU/wall':>8} "
          f"{'TRUSTED':>8} {'attempts':>8} {'verdicts':>9} {'verify':>7}")
    for name, r in results.items():
        same = r.verdicts == base.verdicts and (r.attempts == base.attempts or (
            len(r.attempts) == 1 and sum(r.attempts.values()) == sum(base.attempts.values())))
        trusted = sum(1 for v in r.verdicts.values() if v == "TRUSTED")
        print(f"{name:>10} {r.elapsed_s:8.1f} {len(names) / r.elapsed_s * 60:8.1f} "
              f"{base.elapsed_s / r.elapsed_s:7.1f}x {r.cpu_s:8.1f} {r.cpu_s / r.elapsed_s:8.2f} "
              f"{trusted:8} {sum(r.attempts.values()):8} {'same' if same else 'DIFFER':>9} "
              f"{'clean' if r.verify_ok else 'FAILED':>7}" + (f"  {r.note.strip()}" if r.note.strip() else ""))
        if not same:
            totals = len(r.attempts) == 1 and len(base.attempts) != 1  # the scale config counts attempts in all
            diff = sorted(n for n in set(r.verdicts) | set(base.verdicts)
                          if r.verdicts.get(n) != base.verdicts.get(n)
                          or (not totals and r.attempts.get(n) != base.attempts.get(n)))
            print(f"{'':>10} differ from {next(iter(results))}: {', '.join(diff[:10]) or 'no verdict'}"
                  + (f"; attempts {sum(r.attempts.values())} in all against {sum(base.attempts.values())}"
                     " (it also runs the retry sensor's requests)" if totals else ""))
    where = "8" if "8" in setups else chosen[-1]
    print(f"\nwhere the time goes with {where} (seconds per proposal; stages overlap across runs):")
    print(f"  {'stage':64} {'n':>4} {'mean':>7} {'p50':>7} {'p95':>7}")
    for stage, vals in breakdown(setups[where]):
        if vals:
            print(f"  {stage:64} {len(vals):4} {statistics.mean(vals):7.2f} {statistics.median(vals):7.2f} "
                  f"{_pct(vals, 95):7.2f}")
    print(f"\nload average after {os.getloadavg()[0]:.2f} (1 min); homes kept in {work}")
    seq = results.get("sequential")
    eight = results.get("8")
    if seq and eight:
        x, y = len(names) / eight.elapsed_s * 60, len(names) / seq.elapsed_s * 60
        print(f"parallel: 8 runs {x:.1f} proposals/min vs sequential {y:.1f} ({x / y:.1f}x), "
              f"{args.latency:.1f} s model latency")


if __name__ == "__main__":
    main()
