"""What serving a trusted skill over MCP costs: `kavi serve` over stdio driven by the official SDK client, beside
`kavi run` (a process per call) and an in-process call through the same runner.

Measured: the time to start the server and initialize a session, to list the tools, and the median of N calls of
`word_count` over MCP; the median of `kavi run word_count` (a fresh interpreter each time); the median of the
runner's `run` in process (trust check, validation, execute, logged record with fsync) and of `execute` alone.

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


def _no_model() -> Any:
    raise RuntimeError("no model is called while trusting a recorded answer")


def trust_word_count(home: KaviHome) -> None:
    spec = yaml.safe_load((ROOT / "kavi" / "examples" / "proposals" / "word_count.yaml").read_text())
    source = (ROOT / "kavi" / "examples" / "answers" / "word_count" / "1" / "skill.py").read_bytes()
    ctx = ForgeContext.open(home, _no_model)
    ctx.records.register_proposal(parse_proposal(spec), source_path=None, complexity=0.1)
    packet = ctx.store.put(json.dumps({"kind": "BUILD_PACKET", "messages": [], "attempt": 1}).encode(), "build_packet")
    skill = ctx.store.put(source, "skill_source")
    tests = ctx.store.put((ROOT / "kavi/examples/answers" / "word_count" / "1" / "test.py").read_bytes(), "skill_tests")
    build_id = "word_count-a1-bench"
    ctx.records.start_build("word_count", run_id=None, model="recorded", endpoint="bench", packet=packet,
                            build_id=build_id, attempt=1, parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build(build_id, status="VERIFIED", failure_kind=None, skill_sha256=skill.sha256,
                             test_sha256=tests.sha256)
    ctx.records.record_gate_results(build_id, [GateResult(g, Verdict.PASSED, "recorded", 0.0) for g in ALL_GATES])
    ctx.records.set_status("word_count", ProposalStatus.VERIFIED, build_id=build_id, reason="benchmark setup")
    approve(ctx, "word_count", "benchmark")
    assert promote(ctx, "word_count").promoted


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def over_mcp(home: KaviHome, calls: int) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "kavi_assets.cli", "serve"],
                                   env={**os.environ, "KAVI_HOME": str(home.root)})
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
        samples = []
        for _ in range(calls):
            t = time.perf_counter()
            result = await session.call_tool("word_count", TEXT)
            samples.append(time.perf_counter() - t)
            assert not result.isError, result.content
    return {"start": started, "first_list": first_list, "list": statistics.median(lists),
            "tools": len(listed.tools), "calls": samples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--cli-runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = KaviHome(Path(tmp) / "home").ensure()
        trust_word_count(home)
        mcp = anyio.run(over_mcp, home, args.calls)
        env = {**os.environ, "KAVI_HOME": str(home.root)}
        cli = []
        for _ in range(args.cli_runs):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "kavi_assets.cli", "run", "word_count", "--json", json.dumps(TEXT)],
                           env=env, check=True, capture_output=True)
            cli.append(time.perf_counter() - t)
        from kavi_assets.cli.runtime_cmd import _runner

        runner, _, _ = _runner(home)
        runner.run("word_count", TEXT, confirmed=True)  # load once (the server had loaded it too)
        inproc = []
        for _ in range(args.calls):
            t = time.perf_counter()
            runner.run("word_count", TEXT, confirmed=True)
            inproc.append(time.perf_counter() - t)
        cls = runner.loader.load(runner.lookup("word_count"))
        parsed = cls.input_model.model_validate(TEXT)
        bare = []
        for _ in range(args.calls):
            t = time.perf_counter()
            cls(None).execute(parsed)  # type: ignore[arg-type]  # word_count uses no handle
            bare.append(time.perf_counter() - t)
    calls = mcp["calls"]
    print(f"server start + initialize (stdio): {ms(mcp['start'])}")
    print(f"list tools ({mcp['tools']} tools): first {ms(mcp['first_list'])}, median of 10 {ms(mcp['list'])}")
    print(f"word_count over MCP, median of {len(calls)}: {ms(statistics.median(calls))} "
          f"(p90 {ms(sorted(calls)[int(0.9 * (len(calls) - 1))])})")
    print(f"kavi run word_count (new process), median of {len(cli)}: {ms(statistics.median(cli))}")
    print(f"in process (SkillRunner.run, logged with fsync), median of {len(inproc)}: {ms(statistics.median(inproc))}")
    print(f"execute() alone, median of {len(bare)}: {statistics.median(bare) * 1e6:.1f} us")
    print(f"mcp: list {ms(mcp['list'])}, word_count median {ms(statistics.median(calls))} "
          f"(kavi run {ms(statistics.median(cli))}, in process {ms(statistics.median(inproc))})")


if __name__ == "__main__":
    main()
