"""What the gate sandbox costs: every gate run on the shipped skills' recorded answers, with the bubblewrap
sandbox (each gate command a fresh interpreter in a world built for it alone) and, as the baseline measured in
the same run, without it (gate commands forked from the warm runner, the path taken where bubblewrap is
missing). Prints the median seconds per gate and for the whole verification, and the sandbox's own start-up
cost (`/bin/true` in the sandbox against `/bin/true` alone).

    python benchmarks/sandbox_cost.py [--runs 5] [--skills word_count,search_notes,http_get_json,write_note]
                                      [--part wall,cpu] [--data DIR (a datasets.py output: HumanEval proposals)]

The `cpu` part measures what each sandboxed gate job costs in CPU seconds (user + system, every process of the
job: bubblewrap, the shell that joins the cgroups, the interpreter and whatever it starts), through a cpuacct
cgroup per job (cgroup v1, as root). Every verification runs twice in turn: with the gate command lines as they
were before the start-up cuts (the baseline, rebuilt in the same run) and as they are now. With `--data`, the
verifications are those of HumanEval proposals with their reference answers and independent implementations
(the work of `forge_parallel.py`), else of the shipped skills' recorded answers.
"""

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from kavi.build.allowlist import skill_path, test_path
from kavi.gates import acceptance, tools
from kavi.gates.runner import GateConfig, run_gates
from kavi.proposals.model import Proposal
from kavi.sandbox import held, jail, runner

ROOT = Path(__file__).resolve().parents[1]
CPUACCT_ROOT = Path("/sys/fs/cgroup/cpuacct")
ACCEPTANCE_RUNNER = "kavi.gates.acceptance_runner"
# The gate jobs' start before the cuts, rebuilt: the acceptance runner imported httpx (and with it httpx's command
# line client: click, rich, pygments) before anything else, for every skill; the pytest plugin started coverage
# before the skill contract's modules were imported (so their import was traced); pydantic looked for plugins.
BASELINE_ACCEPTANCE = ("import httpx, runpy; "
                       f"runpy.run_module({ACCEPTANCE_RUNNER!r}, run_name='__main__', alter_sys=True)")
BASELINE_PYTEST = ("import sys, pytest, kavi.gates.pytest_report as plugin; plugin.CONTRACT_MODULES = (); "
                   "sys.exit(pytest.console_main())")
BASELINE_ENV = {"PYDANTIC_DISABLE_PLUGINS": ""}
JOB_KINDS = ("acceptance", "independent", "pytest", "mypy", "ruff")


def _verify(names: list[str], runs: int, mypy_cache: Path) -> tuple[dict[str, list[float]], list[float]]:
    per_gate: dict[str, list[float]] = {}
    totals: list[float] = []
    for i in range(runs + 1):
        for name in names:
            spec = yaml.safe_load((ROOT / "kavi/examples/proposals" / f"{name}.yaml").read_text())
            proposal = Proposal.model_validate(spec)
            answer = ROOT / "kavi/examples/answers" / name / "1"
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


# -- CPU per sandboxed job --------------------------------------------------------------------------------------

def _module(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """(the module a `python -m` job runs, its arguments): through the gate jobs' launcher (`-m kavi.sandbox.launch
    PRELOAD MODULE ...`) or directly; (None, []) for anything else."""
    if list(argv[1:3]) == ["-m", "kavi.sandbox.launch"] and len(argv) > 4:
        return argv[4], list(argv[5:])
    if len(argv) > 2 and argv[1] == "-m":
        return argv[2], list(argv[3:])
    return None, []


def job_kind(argv: Sequence[str], cwd: Path) -> str:
    """Which gate job a sandboxed command line is (the acceptance runner runs for both the acceptance gate and the
    independent implementation: told apart by the directory run_gates gives each)."""
    if ACCEPTANCE_RUNNER in argv:
        return "independent" if "independent" in cwd.parts else "acceptance"
    module, _args = _module(argv)
    if module in ("pytest", "mypy"):
        return module
    return "ruff" if "ruff" in " ".join(argv[:3]) else "other"


def baseline_argv(argv: Sequence[str]) -> list[str]:
    """The command line as it was before the start-up cuts (see BASELINE_ACCEPTANCE)."""
    module, args = _module(argv)
    if module == ACCEPTANCE_RUNNER:
        return [argv[0], "-c", BASELINE_ACCEPTANCE, *args]
    if module == "pytest":
        return [argv[0], "-c", BASELINE_PYTEST, *args]
    return list(argv)


class CpuMeter:
    """CPU seconds per sandboxed job: each job's pids cgroup gets a cpuacct cgroup beside it, joined by the same
    shell before the job starts (so every process of the job is counted, also those bubblewrap never reaps), and
    read when the runner removes the job's cgroups. Jobs run concurrently (run_gates uses threads): the job kind
    travels in a thread-local from the gate's call to the cgroup's removal."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.lock = threading.Lock()
        self.samples: list[tuple[str, float]] = []
        self.baseline = False

    @staticmethod
    def problem() -> str | None:
        if not runner.pids_cgroup_available():
            return "no pids cgroup here (the jobs' own cgroups carry the CPU meter)"
        if not (CPUACCT_ROOT / "cpuacct.usage").is_file():
            return "no cgroup v1 cpuacct hierarchy here"
        try:
            probe = CPUACCT_ROOT / f"kavi-bench-probe-{time.monotonic_ns()}"
            probe.mkdir()
            probe.rmdir()
        except OSError as err:
            return f"cannot create a cpuacct cgroup ({err.strerror})"
        return None

    def record(self, seconds: float) -> None:
        kind = getattr(self.local, "kind", None) or "other"
        with self.lock:
            self.samples.append((kind, seconds))

    def take(self) -> list[tuple[str, float]]:
        with self.lock:
            out, self.samples = self.samples, []
        return out

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        meter = self
        base_cgroup = runner._PidsCgroup

        class MeteredCgroup(base_cgroup):  # type: ignore[valid-type, misc]
            def __init__(self, max_processes: int, memory_bytes: int | None = None) -> None:
                super().__init__(max_processes, memory_bytes)
                self.cpuacct = CPUACCT_ROOT / self.path.name
                self.cpuacct.mkdir()

            def join_paths(self) -> list[str]:
                return [*super().join_paths(), str(self.cpuacct / "cgroup.procs")]

            def remove(self) -> None:
                super().remove()  # every process of the job is dead now; its CPU stays charged to the cgroup
                meter.record(int((self.cpuacct / "cpuacct.usage").read_text()) / 1e9)
                for _ in range(40):
                    try:
                        self.cpuacct.rmdir()
                        break
                    except OSError:
                        time.sleep(0.05)

        def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
            def metered(argv: Sequence[str], **kwargs: Any) -> Any:
                meter.local.kind = job_kind(argv, Path(kwargs["cwd"]))
                if meter.baseline:
                    argv = baseline_argv(argv)
                    kwargs["env_extra"] = {**(kwargs.get("env_extra") or {}), **BASELINE_ENV}
                try:
                    return real(list(argv), **kwargs)
                finally:
                    meter.local.kind = None
            return metered

        modules = (acceptance, held, tools)  # every module a gate job starts through
        saved = [m.run_warm for m in modules]
        runner._PidsCgroup = MeteredCgroup  # type: ignore[misc]
        for m in modules:
            m.run_warm = wrap(m.run_warm)  # type: ignore[attr-defined]
        try:
            yield
        finally:
            runner._PidsCgroup = base_cgroup  # type: ignore[misc]
            for m, real in zip(modules, saved, strict=True):
                m.run_warm = real  # type: ignore[attr-defined]


def _cases_from_data(data: Path, limit: int) -> list[tuple[Proposal, dict[str, bytes], bytes | None]]:
    out = []
    for path in sorted((data / "proposals").glob("*.json"))[:limit]:
        proposal = Proposal.model_validate(json.loads(path.read_text()))
        cassette = yaml.safe_load((data / "cassettes" / f"{path.stem}.yaml").read_text())
        by_kind = {it["kind"]: it for it in cassette["interactions"] if it.get("files")}
        files = {rel: text.encode() for rel, text in by_kind["build"]["files"].items()}
        indep = by_kind.get("independent")
        independent = indep["files"][skill_path(proposal.name)].encode() if indep else None
        out.append((proposal, files, independent))
    return out


def _cases_shipped(names: list[str]) -> list[tuple[Proposal, dict[str, bytes], bytes | None]]:
    out: list[tuple[Proposal, dict[str, bytes], bytes | None]] = []
    for name in names:
        spec_file = ROOT / "kavi/examples/proposals" / f"{name}.yaml"
        proposal = Proposal.model_validate(yaml.safe_load(spec_file.read_text()))
        answer = ROOT / "kavi/examples/answers" / name / "1"
        out.append((proposal, {skill_path(name): (answer / "skill.py").read_bytes(),
                               test_path(name): (answer / "test.py").read_bytes()}, None))
    return out


def cpu_per_job(cases: list[tuple[Proposal, dict[str, bytes], bytes | None]], runs: int,
                mypy_cache: Path) -> dict[str, dict[str, list[float]]]:
    """{"baseline" | "now": {job kind: [CPU-s per job]}, plus "verification": [CPU-s per verification]}.
    Baseline and current command lines alternate verification by verification, so load from other work on the
    machine falls on both alike; the first round warms caches (page cache, mypy's cache) and is not counted."""
    meter = CpuMeter()
    figures: dict[str, dict[str, list[float]]] = {"baseline": {}, "now": {}}
    with meter.installed():
        for i in range(runs + 1):
            for proposal, files, independent in cases:
                for mode in ("baseline", "now"):
                    meter.baseline = mode == "baseline"
                    with tempfile.TemporaryDirectory(prefix="kavi-bench-cpu-") as work:
                        out = run_gates(Path(work), proposal, files, GateConfig(mypy_cache_root=mypy_cache),
                                        independent=independent, independent_label="reference")
                    samples = meter.take()
                    if not out.passed:
                        failed = [(r.gate, r.reason) for r in out.results if not r.ok]
                        raise SystemExit(f"{proposal.name} ({mode}): the recorded answer did not pass: {failed}")
                    if i == 0:
                        continue
                    for kind, seconds in samples:
                        figures[mode].setdefault(kind, []).append(seconds)
                    figures[mode].setdefault("verification", []).append(sum(sec for _kind, sec in samples))
    return figures


def print_cpu(figures: dict[str, dict[str, list[float]]], what: str) -> None:
    base, now = figures["baseline"], figures["now"]
    print(f"CPU-s per sandboxed gate job on {what} (median; every process of the job, bubblewrap included)")
    print(f"{'job':<22} {'jobs':>5} {'baseline':>9} {'now':>8} {'change':>8}")
    for kind in [*JOB_KINDS, *sorted(set(now) - {*JOB_KINDS, "verification"}), "verification"]:
        if kind not in now or kind not in base:
            continue
        b, n = statistics.median(base[kind]), statistics.median(now[kind])
        label = "all jobs of a proposal" if kind == "verification" else kind
        print(f"{label:<22} {len(now[kind]):>5} {b:>9.3f} {n:>8.3f} {100 * (n - b) / b:>+7.1f}%")
    print("(baseline: the same run with the gate jobs started as before: the acceptance runner imported httpx and "
          "its command line client for every skill, the pytest plugin traced the import of pydantic, pydantic "
          "looked for plugins)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skills", default="word_count,search_notes,http_get_json,write_note")
    parser.add_argument("--part", default="wall,cpu", help="wall (sandbox against warm runner), cpu (CPU per job)")
    parser.add_argument("--data", type=Path, default=None, help="a datasets.py output: its HumanEval proposals")
    parser.add_argument("--limit", type=int, default=8, help="proposals taken from --data")
    args = parser.parse_args()
    names = [n for n in args.skills.split(",") if n]
    parts = {p.strip() for p in args.part.split(",") if p.strip()}
    if not parts or parts - {"wall", "cpu"} or not 1 <= args.runs <= 100 or not 1 <= args.limit <= 500:
        raise SystemExit("--part from wall,cpu; --runs 1..100; --limit 1..500")
    problem = jail.probe()
    if problem is not None:
        raise SystemExit(f"the gate sandbox is unavailable here: {problem}")
    if "cpu" in parts:
        why = CpuMeter.problem()
        if why is not None:
            raise SystemExit(f"the CPU part cannot measure here: {why}")
        if args.data is not None and not (args.data / "proposals").is_dir():
            raise SystemExit(f"{args.data} is not a datasets.py output (no proposals/ folder)")
        cases = _cases_from_data(args.data, args.limit) if args.data else _cases_shipped(names)
        what = (f"{len(cases)} HumanEval proposals" if args.data else ", ".join(names)) + f", {args.runs} runs"
        with tempfile.TemporaryDirectory(prefix="kavi-bench-mypy-") as cache:
            print_cpu(cpu_per_job(cases, args.runs, Path(cache)), what)
        if "wall" not in parts:
            print(f"python: {sys.version.split()[0]}")
            return
    with tempfile.TemporaryDirectory(prefix="kavi-bench-mypy-") as cache:
        boxed_gates, boxed_total = _verify(names, args.runs, Path(cache))
        real_probe = jail.probe
        jail.probe = lambda: "switched off for the baseline"  # type: ignore[assignment]
        opted = os.environ.get("KAVI_WARM_RUNNER")
        os.environ["KAVI_WARM_RUNNER"] = "1"  # the baseline is the warm runner, an opt-in
        try:
            warm_gates, warm_total = _verify(names, args.runs, Path(cache))
        finally:
            jail.probe = real_probe
            if opted is None:
                os.environ.pop("KAVI_WARM_RUNNER", None)
            else:
                os.environ["KAVI_WARM_RUNNER"] = opted
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
