"""What serving a trusted skill over MCP costs: `kavi serve` over stdio driven by the official SDK client, beside
`kavi run` (a process per call) and the uncontained in-process call the runtime made before calls were contained.

Measured: the time to start the server and initialize a session, to list the tools, and the median of N calls of
`word_count` over MCP (each in a sandboxed worker from the server's warm pool); the median while a second client
keeps a worker busy with a call that spins until its deadline, against the median of the calls made in the blocks
between (blocks with and without the busy worker alternate, so a drift of the machine falls on both), and as a
reference the median beside a plain process computing at niceness 10 (one busy core, no worker started or
killed); the median of `kavi run word_count` (a fresh interpreter each time, its worker started first); the median
of the contained runner's `run` in process, of the uncontained call (hash-checked load, validation, execute,
logged record with fsync, all in this process) and of `execute` alone. Targets: word_count over MCP at most 15 ms;
a blocked worker moves the other client's median by at most 20%; `kavi run` at most 500 ms.

Setup: a fresh skills home in which the shipped word_count answer is a trusted version. It is recorded as a
verified attempt with passing gate results, approved and promoted by the forge's own functions, without running
the gates: this measures serving, not forging (`kavi demo` forges it for real).

Run: python benchmarks/mcp_latency.py [--calls 50] [--cli-runs 10]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import yaml
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from kavi.forge.context import ForgeContext
from kavi.forge.promote import approve, promote
from kavi.home import KaviHome
from kavi.lifecycle import ProposalStatus, Verdict
from kavi.proposals.model import parse_proposal
from kavi.verdicts import ALL_GATES, GateResult

ROOT = Path(__file__).resolve().parents[1]
TEXT = {"text": "the quick brown fox\njumps over the lazy dog"}
PAUSE_S = 0.3  # between an agent's calls: each call's worker is replaced in the meantime
BLOCKS = 5  # the blocked-worker comparison: this many blocks of calls with, and as many without, the busy worker


def _no_model() -> Any:
    raise RuntimeError("no model is called while trusting a recorded answer")


# A skill that computes until its deadline: the "blocked worker" (as a backtracking regex would be).
SPIN_SPEC = {
    "name": "spin_until_deadline", "side_effect_class": "READ_ONLY", "timeout_s": 2,
    "description": "Count upwards for the given number of seconds of CPU time, then return the count.",
    "inputs": [{"name": "seconds", "type": "float"}], "outputs": [{"name": "count", "type": "int"}],
    "examples": [{"input": {"seconds": 0}, "expected": {"count": 0}}],
}
SPIN_SOURCE = b'''"""Count for a while."""

import time

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class SpinInput(BaseModel):
    seconds: float


class SpinOutput(BaseModel):
    count: int


class SpinUntilDeadline(BaseSkill[SpinInput, SpinOutput]):
    name = "spin_until_deadline"
    description = "Count upwards for a while."
    input_model = SpinInput
    output_model = SpinOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SpinInput) -> SpinOutput:
        count = 0
        end = time.process_time() + input_data.seconds
        while time.process_time() < end:
            count += 1
        return SpinOutput(count=count)
'''


def trust_answer(home: KaviHome, spec: dict[str, Any], source: bytes, tests: bytes) -> None:
    """Record `source` as a verified, approved and promoted version of `spec` without running the gates."""
    name = spec["name"]
    ctx = ForgeContext.open(home, _no_model)
    ctx.records.register_proposal(parse_proposal(spec), source_path=None, complexity=0.1)
    packet = ctx.store.put(json.dumps({"kind": "BUILD_PACKET", "messages": [], "attempt": 1}).encode(), "build_packet")
    skill = ctx.store.put(source, "skill_source")
    test = ctx.store.put(tests, "skill_tests")
    build_id = f"{name}-a1-bench"
    ctx.records.start_build(name, run_id=None, model="recorded", endpoint="bench", packet=packet,
                            build_id=build_id, attempt=1, parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build(build_id, status="VERIFIED", failure_kind=None, skill_sha256=skill.sha256,
                             test_sha256=test.sha256)
    ctx.records.record_gate_results(build_id, [GateResult(g, Verdict.PASSED, "recorded", 0.0) for g in ALL_GATES])
    ctx.records.set_status(name, ProposalStatus.VERIFIED, build_id=build_id, reason="benchmark setup")
    approve(ctx, name, "benchmark")
    assert promote(ctx, name).promoted


def trust_word_count(home: KaviHome) -> None:
    spec = yaml.safe_load((ROOT / "kavi" / "examples" / "proposals" / "word_count.yaml").read_text())
    answers = ROOT / "kavi" / "examples" / "answers" / "word_count" / "1"
    trust_answer(home, spec, (answers / "skill.py").read_bytes(), (answers / "test.py").read_bytes())
    trust_answer(home, SPIN_SPEC, SPIN_SOURCE, b"def test_nothing() -> None:\n    pass\n")


def _installed_env(home: KaviHome) -> dict[str, str]:
    """The environment of a command as an installation runs it: with its bytecode cached (a shell that sets
    PYTHONDONTWRITEBYTECODE would make every start compile the project's modules again)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"KAVI_HOME": str(home.root)}


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def over_mcp(home: KaviHome, calls: int) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "kavi_assets.cli", "serve"],
                                   env=_installed_env(home))
    t0 = time.perf_counter()
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, client_info=types.Implementation(name="mcp-latency", version="1")) as session:
        await session.initialize()
        started = time.perf_counter() - t0
        t = time.perf_counter()
        listed = await session.list_tools()
        first_list = time.perf_counter() - t
        lists = []
        for _ in range(10):
            t = time.perf_counter()
            await session.list_tools()
            lists.append(time.perf_counter() - t)
        samples = await _calls(session, calls)
        t = time.perf_counter()
        await _calls(session, calls, pause_s=0.0)
        back_to_back = calls / (time.perf_counter() - t)
        # A second client keeps one worker busy: each of its calls computes until its deadline and is killed. The
        # calls with and without it are measured in alternating blocks, so a drift of the machine's speed during
        # the run falls on both sides alike.
        quiet: list[float] = []
        blocked: list[float] = []
        timeouts = 0
        per_block = max(1, calls // BLOCKS)
        async with stdio_client(params) as (read2, write2), \
                ClientSession(read2, write2, client_info=types.Implementation(name="blocker", version="1")) as other:
            await other.initialize()
            for _ in range(BLOCKS):
                quiet += await _calls(session, per_block)
                stop = anyio.Event()

                async def block(stop: anyio.Event) -> None:
                    nonlocal timeouts
                    while not stop.is_set():
                        result = await other.call_tool("spin_until_deadline", {"seconds": 60})
                        timeouts += result.isError and "deadline" in str(result.content)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(block, stop)
                    await anyio.sleep(0.5)  # the blocking call is running
                    blocked += await _calls(session, per_block)
                    stop.set()
                # The blocking call has ended at its deadline: its server's pool refills before the next quiet block.
                await anyio.sleep(0.5)
        # The reference for that figure: the same calls beside a plain process computing at niceness 10 (no MCP, no
        # worker started or killed), what one busy core alone costs a call on this machine.
        spinner = subprocess.Popen([sys.executable, "-c", "import os\nos.nice(10)\nwhile True:\n    pass\n"])
        try:
            await anyio.sleep(0.3)
            beside_spinner = await _calls(session, calls)
        finally:
            spinner.kill()
            spinner.wait()
    return {"start": started, "first_list": first_list, "list": statistics.median(lists),
            "tools": len(listed.tools), "calls": samples, "quiet": quiet, "blocked": blocked, "timeouts": timeouts,
            "back_to_back": back_to_back, "beside_spinner": beside_spinner}


async def _calls(session: ClientSession, calls: int, pause_s: float = PAUSE_S) -> list[float]:
    """Latency of `calls` word_count calls, `pause_s` apart (an agent thinks between its calls; with no pause the
    figure is the pool's refill rate, reported separately as calls per second)."""
    samples = []
    for _ in range(calls):
        await anyio.sleep(pause_s)
        t = time.perf_counter()
        result = await session.call_tool("word_count", TEXT)
        samples.append(time.perf_counter() - t)
        assert not result.isError, result.content
    return samples


def uncontained_call(home: KaviHome, runner: Any, log: Any) -> None:
    """One call as the runtime made it before containment: hash-checked load (cached), validation, execute in this
    process, one record appended with fsync. The reference the contained call is compared with."""
    from kavi.runtime.records import ExecutionRecord, new_id, utc_now_iso

    t0 = time.perf_counter()
    skill = runner.lookup("word_count")
    cls = runner.loader.load(skill)
    out = cls(None).execute(cls.input_model.model_validate(TEXT, extra="forbid"))
    now = utc_now_iso()
    log.append(ExecutionRecord(session_id=new_id(), skill_name=skill.name, source_hash=skill.sha256,
                               side_effect_class=skill.side_effect_class, skill_version=skill.version,
                               input_json=json.dumps(TEXT), output_json=out.model_dump_json(), success=True,
                               started_at=now, finished_at=now, duration_ms=(time.perf_counter() - t0) * 1000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--cli-runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = KaviHome(Path(tmp) / "home").ensure()
        trust_word_count(home)
        mcp = anyio.run(over_mcp, home, args.calls)
        # One run first writes the bytecode cache.
        env = _installed_env(home)
        subprocess.run([sys.executable, "-m", "kavi_assets.cli", "run", "word_count", "--json", json.dumps(TEXT)],
                       env=env, check=True, capture_output=True)
        cli = []
        for _ in range(args.cli_runs):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "kavi_assets.cli", "run", "word_count", "--json", json.dumps(TEXT)],
                           env=env, check=True, capture_output=True)
            cli.append(time.perf_counter() - t)
        from kavi.runtime.worker import WorkerPool
        from kavi.settings import read_setting
        from kavi_assets.cli.runtime_cmd import _runner

        pool = WorkerPool(read_setting("run_workers"))
        runner, log, _ = _runner(home, workers=pool)
        runner.run("word_count", TEXT, confirmed=True)
        inproc = []
        for _ in range(args.calls):
            time.sleep(PAUSE_S)  # the pool refills between calls, as between an agent's calls
            t = time.perf_counter()
            runner.run("word_count", TEXT, confirmed=True)
            inproc.append(time.perf_counter() - t)
        pool.close()
        uncontained_call(home, runner, log)  # load once (the uncontained server had loaded it too)
        plain = []
        for _ in range(args.calls):
            t = time.perf_counter()
            uncontained_call(home, runner, log)
            plain.append(time.perf_counter() - t)
        cls = runner.loader.load(runner.lookup("word_count"))
        parsed = cls.input_model.model_validate(TEXT)
        bare = []
        for _ in range(args.calls):
            t = time.perf_counter()
            cls(None).execute(parsed)  # word_count uses no handle
            bare.append(time.perf_counter() - t)
    calls, blocked = mcp["calls"], mcp["blocked"]
    quiet_med, blocked_med = statistics.median(calls), statistics.median(blocked)
    beside_med = statistics.median(mcp["quiet"])  # the calls in the blocks between the blocked ones
    print(f"server start + initialize (stdio): {ms(mcp['start'])}")
    print(f"list tools ({mcp['tools']} tools): first {ms(mcp['first_list'])}, median of 10 {ms(mcp['list'])}")
    print(f"word_count over MCP (contained, calls {PAUSE_S:g}s apart), median of {len(calls)}: {ms(quiet_med)} "
          f"(p90 {ms(sorted(calls)[int(0.9 * (len(calls) - 1))])}; target <= 15 ms)")
    print(f"  back to back (no pause: bounded by how fast workers are started): {mcp['back_to_back']:.1f} calls/s")
    print(f"  the same while another client's worker computes until its deadline: {ms(blocked_med)} against "
          f"{ms(beside_med)} in the blocks between ({(blocked_med / beside_med - 1) * 100:+.0f}%; target <= +20%; "
          f"{len(blocked)} calls each way, in {BLOCKS} blocks; {mcp['timeouts']} blocking calls killed at their "
          "deadline)")
    spun = statistics.median(mcp["beside_spinner"])
    print(f"  the same beside a plain process computing at niceness 10 (one busy core, no worker churn): {ms(spun)} "
          f"({(spun / quiet_med - 1) * 100:+.0f}%; the reference for the figure above)")
    print(f"kavi run word_count (new process, contained), median of {len(cli)}: {ms(statistics.median(cli))} "
          "(target <= 500 ms)")
    print(f"contained call in process (SkillRunner.run from a warm pool, fsync), median of {len(inproc)}: "
          f"{ms(statistics.median(inproc))}")
    print(f"uncontained call in process (load, validate, execute, fsync'd record), median of {len(plain)}: "
          f"{ms(statistics.median(plain))}")
    print(f"execute() alone, median of {len(bare)}: {statistics.median(bare) * 1e6:.1f} us")
    print(f"containment costs {ms(statistics.median(inproc) - statistics.median(plain))} per call in process")
    print(f"mcp: list {ms(mcp['list'])}, word_count median {ms(quiet_med)}, blocked {ms(blocked_med)} "
          f"(kavi run {ms(statistics.median(cli))}, contained in process {ms(statistics.median(inproc))}, "
          f"uncontained {ms(statistics.median(plain))})")


if __name__ == "__main__":
    main()
