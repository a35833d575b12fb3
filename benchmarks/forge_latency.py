"""One proposal end to end, in process (the forge core, no Dagster) and through `kavi forge` (the CLI, through
Dagster), beside the standalone times of each gate's tool run directly on the same files, in the same run.

Run: python benchmarks/forge_latency.py [--data DIR (a datasets.py output)] [--problems 5] [--cli-runs 3]
The model is THE RECORDED MODEL (replayed cassettes, not a live model) with KAVI_RECORDED_SPEED=0: no replayed
latency, so every figure is the forge's own cost. "Warm" means: this process (or the CLI's home) has forged a
proposal before, so imports, the mypy cache and the gates' warm runner are in place.
"""

import argparse
import hashlib
import itertools
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RUFF_ARGS = ["check", "--isolated", "--no-cache", "--output-format=json", "--select=E,F,W,I,B,UP",
             "--line-length=110", "--target-version=py311", "--config",
             "lint.isort.known-first-party=['skills', 'kavi_assets']"]


def _timed(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, check=False)
    return time.perf_counter() - t0, proc.returncode


def _best(fn: Any, runs: int) -> float:
    """The median of `runs` timings of fn() -> seconds."""
    return statistics.median(fn() for _ in range(runs))


# -- in process ---------------------------------------------------------------------------------------


def in_process(data: Path, names: list[str], home_root: Path, ledger_size: int = 0
               ) -> tuple[list[dict[str, float]], Any, Any]:
    """Forge each problem in turn through the core functions; the first one warms the process up. With
    `ledger_size`, the home's ledger first holds that many seeded proposals × 3 attempts (ledger_scale.py)."""
    from kavi.forge.build import run_build
    from kavi.forge.context import ForgeContext, ForgeSettings
    from kavi.forge.intake import intake
    from kavi.forge.packet import prepare_packet
    from kavi.forge.promote import promote
    from kavi.forge.research import record_success, research
    from kavi.forge.verify import verify
    from kavi.home import KaviHome
    from kavi.proposals.model import load_proposal
    from kavi.skills.base import SideEffectClass
    from resources.llm import LLMResource

    home = KaviHome(home_root).ensure()
    if ledger_size:
        sys.path.insert(0, str(HERE))
        from ledger_scale import seed

        seed(home.ledger_path, ledger_size, 3)
    llm = LLMResource(cassette_dir=str(data / "cassettes"))
    ctx = ForgeContext.open(home, llm.get_client, ForgeSettings(auto_approve=(SideEffectClass.READ_ONLY,)))
    rows = []
    for name in names:
        proposal = load_proposal(data / "proposals" / f"{name}.json")
        t = [time.perf_counter()]
        intake(ctx, proposal, None)
        t.append(time.perf_counter())
        prepare_packet(ctx, name, None)
        t.append(time.perf_counter())
        run_build(ctx, name, None)
        t.append(time.perf_counter())
        out = verify(ctx, name, None)
        t.append(time.perf_counter())
        promoted = False
        if out.passed:
            record_success(ctx, name, out.build_id)
            promoted = promote(ctx, name).promoted
        else:
            research(ctx, name, out)
        t.append(time.perf_counter())
        steps = dict(zip(["intake", "packet", "build", "verify", "promote"],
                         [b - a for a, b in itertools.pairwise(t)], strict=True))
        steps["total"] = t[-1] - t[0]
        steps["gates_wall"] = out.duration_s
        steps.update({f"gate:{r.gate}": r.duration_s for r in out.results})
        steps["trusted"] = float(promoted)
        rows.append(steps)
    last = ctx.records.latest_build(names[-1])
    return rows, ctx, last


# -- the gates' tools, run directly ------------------------------------------------------------------------


def standalone(ctx: Any, name: str, runs: int) -> dict[str, float]:
    """Each gate's own tool on the same files, without the forge: fresh processes, a warm mypy cache."""
    import kavi_assets
    from kavi.gates.acceptance import _cases, _job
    from kavi.gates.tools import ruff_command
    from kavi.policy.invariants import check_invariants
    from kavi.policy.policy import load_policy
    from kavi.policy.scanner import scan_source

    build = ctx.records.latest_build(name)
    proposal = ctx.records.require_proposal(name).proposal
    work = Path(tempfile.mkdtemp(prefix="kavi-standalone-"))
    skill_rel, test_rel = f"skills/{name}.py", f"tests/test_skill_{name}.py"
    (work / "skills").mkdir()
    (work / "tests").mkdir()
    (work / skill_rel).write_bytes(ctx.store.get(build.skill_sha256))
    (work / test_rel).write_bytes(ctx.store.get(build.test_sha256))
    (work / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1",
               MYPYPATH=str(Path(kavi_assets.__file__).resolve().parent.parent))
    cache = work / ".mypy-cache"
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--show-error-codes",
            "--cache-dir", str(cache), "--python-version", "3.11", skill_rel]
    _timed(mypy, work, env)  # fills the cache: the figure below is warm mypy
    pytest = [sys.executable, "-m", "pytest", "-q", "-c", "pytest.ini", "--rootdir", ".", "--no-header", test_rel]
    coverage = [sys.executable, "-m", "coverage", "run", "--data-file=.cov", "--source=skills", "-m", *pytest[2:]]
    skill_bytes = (work / skill_rel).read_bytes()
    job = json.dumps({**_job(proposal, skill_rel, hashlib.sha256(skill_bytes).hexdigest(), _cases(proposal)),
                      "nonce": "standalone"}).encode()
    source = (work / skill_rel).read_text()
    policy = load_policy(None)

    def call(fn: Any) -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    out = {
        "ruff (both files, one call)": _best(lambda: _timed([*ruff_command(), *RUFF_ARGS, skill_rel, test_rel],
                                                            work, env)[0], runs),
        "mypy --strict (warm cache)": _best(lambda: _timed(mypy, work, env)[0], runs),
        "pytest": _best(lambda: _timed(pytest, work, env)[0], runs),
        "coverage run -m pytest": _best(lambda: _timed(coverage, work, env)[0], runs),
        "policy scan (function call)": _best(lambda: call(lambda: scan_source(
            source, proposal.side_effect_class, declared_secrets=proposal.required_secrets, policy=policy)), runs),
        "AST invariants (function call)": _best(lambda: call(lambda: check_invariants(
            source, expected_class=proposal.side_effect_class, expected_name=name)), runs),
        "acceptance (python -m ...acceptance_runner)": _best(lambda: _timed(
            [sys.executable, "-m", "kavi.gates.acceptance_runner"], work, env, job)[0], runs),
    }
    shutil.rmtree(work, ignore_errors=True)
    return out


# -- through the CLI -----------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def through_cli(data: Path, names: list[str], root: Path) -> list[tuple[str, float, str]]:
    """`kavi propose` (untimed) then `kavi forge NAME` (timed), for each name, in one fresh home."""
    port = _free_port()
    env = dict(os.environ, KAVI_HOME=str(root / "home"), DAGSTER_HOME=str(root / "dagster"),
               KAVI_RECORDED_SPEED="0", KAVI_AUTO_APPROVE="READ_ONLY",
               KAVI_LLM_BASE_URL=f"http://127.0.0.1:{port}/v1", KAVI_LLM_MODELS="recorded-coder-a")
    server = subprocess.Popen([sys.executable, "-m", "kavi.llm.recorded", "--port", str(port),
                               "--cassettes", str(data / "cassettes")], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    out = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the recorded model server did not start") from None
                time.sleep(0.1)
        kavi = [sys.executable, "-m", "kavi_assets.cli"]
        for name in names:
            subprocess.run([*kavi, "propose", str(data / "proposals" / f"{name}.json")], env=env,
                           capture_output=True, check=True)
            t0 = time.perf_counter()
            proc = subprocess.run([*kavi, "forge", name, "--json"], env=env, capture_output=True, check=False)
            took = time.perf_counter() - t0
            try:
                status = json.loads(proc.stdout)["status"]
            except (json.JSONDecodeError, KeyError):
                status = f"exit {proc.returncode}: {proc.stderr.decode()[-300:]}"
            out.append((name, took, status))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(10)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="a datasets.py output (default: convert HumanEval)")
    parser.add_argument("--problems", type=int, default=6, help="problems forged in process (the first warms up)")
    parser.add_argument("--cli-runs", type=int, default=3, help="`kavi forge` runs after one warm-up run")
    parser.add_argument("--runs", type=int, default=5, help="repetitions of each standalone tool")
    parser.add_argument("--ledger-size", type=int, default=10_000,
                        help="also forge the in-process problems into a ledger already holding this many "
                             "proposals × 3 attempts, and compare (0: skip)")
    args = parser.parse_args()
    os.environ["KAVI_RECORDED_SPEED"] = "0"
    load_before = os.getloadavg()[0]
    data = args.data
    if data is None:
        data = Path(tempfile.mkdtemp(prefix="kavi-datasets-"))
        need = args.problems + args.cli_runs + 1
        subprocess.run([sys.executable, str(HERE / "datasets.py"), "--out", str(data), "--limit", str(need + 4)],
                       check=True, stdout=subprocess.DEVNULL)
    names = sorted(p.stem for p in (data / "proposals").glob("*.json"))
    if len(names) < args.problems + args.cli_runs + 1:
        raise SystemExit(f"{data} has {len(names)} problems; need {args.problems + args.cli_runs + 1}")
    in_names, cli_names = names[: args.problems], names[args.problems: args.problems + args.cli_runs + 1]
    root = Path(tempfile.mkdtemp(prefix="kavi-latency-"))
    print("THE RECORDED MODEL (replayed cassettes, not a live model), KAVI_RECORDED_SPEED=0: no replayed latency.")
    print(f"{os.cpu_count()} CPUs; load average (1 min) before: {load_before:.2f}\n")

    rows, ctx, _ = in_process(data, in_names, root / "inproc")
    big_rows = in_process(data, in_names, root / "big", args.ledger_size)[0] if args.ledger_size else []
    warm = rows[1:]
    # The proposal compared with its standalone gates: the last one that went all the way to TRUSTED.
    target_i = max((i for i, r in enumerate(rows) if r["trusted"] and i > 0), default=len(rows) - 1)
    target = in_names[target_i]
    gates = standalone(ctx, target, args.runs)
    cli = through_cli(data, cli_names, root / "cli")

    print(f"in process (forge core, no Dagster): {len(warm)} warm proposals after 1 warm-up "
          f"(cold: {rows[0]['total']:.2f}s)")
    print(f"{'step':12} " + " ".join(f"{s:>8}" for s in ("intake", "packet", "build", "verify", "promote", "total")))
    for n, r in zip(in_names[1:], warm, strict=True):
        print(f"{n[:12]:12} " + " ".join(f"{r[s]:8.3f}" for s in ("intake", "packet", "build", "verify", "promote",
                                                                  "total"))
              + ("" if r["trusted"] else "  (not TRUSTED)"))
    med = {k: statistics.median(r[k] for r in warm) for k in warm[0]}
    print(f"{'median':12} " + " ".join(f"{med[s]:8.3f}" for s in ("intake", "packet", "build", "verify", "promote",
                                                                  "total")))
    if big_rows:
        big = {k: statistics.median(r[k] for r in big_rows[1:]) for k in big_rows[1]}
        print(f"{'@' + format(args.ledger_size, ',') + ' ledger':12} "
              + " ".join(f"{big[s]:8.3f}" for s in ("intake", "packet", "build", "verify", "promote", "total"))
              + f"   (median, the same problems forged into a ledger already holding {args.ledger_size:,} "
              "proposals × 3 attempts and as many trusted skills)")
    last = rows[target_i]
    print(f"\nthe gates of {target}, standalone (tools run directly on the same files, median of {args.runs}) "
          "beside inside the forge:")
    forge_gate = {"ruff (both files, one call)": "gate:ruff", "mypy --strict (warm cache)": "gate:mypy",
                  "pytest": "", "coverage run -m pytest": "gate:pytest",
                  "policy scan (function call)": "gate:policy", "AST invariants (function call)": "gate:invariants",
                  "acceptance (python -m ...acceptance_runner)": "gate:acceptance"}
    print(f"{'gate tool':46} {'standalone s':>13} {'in forge s':>11}")
    for label, secs in gates.items():
        key = forge_gate[label]
        inside = f"{last[key]:11.3f}" if key in last else f"{'-':>11}"
        note = "  (the forge's pytest gate: pytest under coverage, one process)" if key == "gate:pytest" else ""
        print(f"{label:46} {secs:13.3f} {inside}{note}")
    slowest = max(gates.values())
    # coverage's run contains a pytest run: the sum counts that run once.
    total = sum(v for k, v in gates.items() if k != "pytest")
    e2e = last["total"]
    print(f"{'sum of standalone gates (pytest once)':46} {total:13.3f}")
    print(f"{'slowest standalone gate':46} {slowest:13.3f}")
    print(f"{'all gates inside the forge (concurrent, wall)':46} {'':13} {last['gates_wall']:11.3f}")

    print(f"\n{'figure':58} {'measured':>9} {'target':>9}")
    print(f"{'in process, one proposal end to end, warm (s) [' + target[:14] + ']':58} {e2e:9.2f} {'<= 2.00':>9}")
    print(f"{'in process, median of the warm proposals (s)':58} {med['total']:9.2f} {'<= 2.00':>9}")
    print(f"{'  ... ÷ sum of standalone gates':58} {e2e / total:9.2f}x {'<= 1.5x':>9}")
    print(f"{'  overhead over the slowest gate (s)':58} {e2e - slowest:9.2f}")
    print(f"{'  overhead over the sum of the gates (s)':58} {e2e - total:9.2f}")
    cli_warm = cli[1:]
    for n, took, status in cli:
        tag = "warm-up, cold mypy cache" if n == cli[0][0] else "warm"
        print(f"{'kavi forge ' + n[:26] + ' (s, ' + tag + ')':58} {took:9.2f} "
              f"{'<= 5.00' if tag == 'warm' else '':>9}  {status}")
    if cli_warm:
        cli_med = statistics.median(t for _, t, _ in cli_warm)
        print(f"{'kavi forge, median of the warm runs (s)':58} {cli_med:9.2f} {'<= 5.00':>9}")
        print(f"{'  ... overhead over the in-process median (s)':58} {cli_med - med['total']:9.2f}"
              "   (process start, imports of dagster/typer/rich, the Dagster run)")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kavi_assets.cli", "--help"], capture_output=True, check=False)
    print(f"{'  for scale: kavi --help, a bare CLI start (s)':58} {time.perf_counter() - t0:9.2f}")
    print(f"\nload average (1 min) after: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs shared with other work")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
