"""`kavi serve` runs every call in a contained worker: a runaway call is killed at its deadline while other calls are
served, a full pool answers busy, and a client that goes away takes its call's worker with it."""

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from kavi.home import KaviHome
from kavi.runtime.records import ExecutionLog
from kavi.runtime.worker import sandbox_problem
from tests.factories import SPIN_SOURCE, SPIN_SPEC, trust_example, trust_version

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no worker sandbox here: {sandbox_problem()}")
CLIENT = types.Implementation(name="pytest-agent", version="1.2")


def _params(home: KaviHome, workers: int = 4) -> StdioServerParameters:
    env = {**os.environ, "KAVI_HOME": str(home.root), "KAVI_RUN_WORKERS": str(workers)}
    return StdioServerParameters(command=sys.executable, args=["-m", "kavi_assets.cli", "serve"], env=env)


def _text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[1])


def _workers() -> set[int]:
    """Process ids of the interpreters of contained workers started by this test's servers (descendants of this
    process: another test worker's servers, running beside it under xdist, are not counted); the sandbox's wrappers
    around each are not counted."""
    listing = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=False).stdout
    found = set()
    me = os.getpid()
    for line in listing.splitlines():
        pid, _, args = line.strip().partition(" ")
        if not (args.startswith(sys.executable) and "kavi.runtime.worker_main" in args):
            continue
        ancestor: int | None = int(pid)
        while ancestor not in (None, 0, 1, me):
            ancestor = _parent_of(ancestor)
        if ancestor == me:
            found.add(int(pid))
    return found


def test_a_runaway_call_is_killed_while_others_are_served(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "word_count")
    trust_version(kavi_home, SPIN_SPEC, SPIN_SOURCE)

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {"quick": []}
        async with stdio_client(_params(kavi_home)) as (read, write), \
                ClientSession(read, write, client_info=CLIENT) as session:
            await session.initialize()

            async def runaway() -> None:
                t0 = time.monotonic()
                seen["spin"] = await session.call_tool("spin", {"seconds": 600})
                seen["spin_s"] = time.monotonic() - t0

            async with anyio.create_task_group() as tg:
                tg.start_soon(runaway)
                await anyio.sleep(0.5)
                for _ in range(5):
                    result = await session.call_tool("word_count", {"text": "a b c"})
                    seen["quick"].append(result)
                seen["quick_done_before_spin"] = "spin" not in seen
        return seen

    seen = anyio.run(scenario)
    assert seen["quick_done_before_spin"]
    assert all(not r.isError and r.structuredContent == {"words": 3, "lines": 1, "characters": 5}
               for r in seen["quick"])
    spin = seen["spin"]
    assert spin.isError and "deadline of 3s" in _text(spin)
    assert 2.5 < seen["spin_s"] < 30  # killed at its deadline, not run to its end
    assert str(kavi_home.root) not in _text(spin) and "/tmp" not in _text(spin)  # no host path in the tool error
    records = ExecutionLog(kavi_home.executions_log).read_all()
    assert any(r.skill_name == "spin" and r.timed_out for r in records)


def test_a_full_pool_answers_busy(kavi_home: KaviHome) -> None:
    trust_version(kavi_home, SPIN_SPEC, SPIN_SOURCE)

    async def scenario() -> types.CallToolResult:
        async with stdio_client(_params(kavi_home, workers=1)) as (read, write), \
                ClientSession(read, write, client_info=CLIENT) as session:
            await session.initialize()
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.call_tool, "spin", {"seconds": 2})
                await anyio.sleep(1.0)
                busy = await session.call_tool("spin", {"seconds": 0})
        return busy

    busy = anyio.run(scenario)
    assert busy.isError and "busy" in _text(busy) and "retry" in _text(busy)


def test_a_client_that_goes_away_takes_its_worker(kavi_home: KaviHome) -> None:
    spec = {**SPIN_SPEC, "timeout_s": 60}
    trust_version(kavi_home, spec, SPIN_SOURCE)
    before = _workers()

    async def scenario() -> None:
        async with stdio_client(_params(kavi_home, workers=1)) as (read, write), \
                ClientSession(read, write, client_info=CLIENT) as session:
            await session.initialize()
            with anyio.move_on_after(2.0):  # the client stops waiting and disconnects mid-call
                await session.call_tool("spin", {"seconds": 600})

    t0 = time.monotonic()
    anyio.run(scenario)
    deadline = time.monotonic() + 10
    while _workers() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (_workers() - before), "a worker outlived its client"
    assert time.monotonic() - t0 < 15


def test_a_cancelled_call_kills_its_worker_and_the_server_goes_on(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "word_count")
    trust_version(kavi_home, {**SPIN_SPEC, "timeout_s": 60}, SPIN_SOURCE)
    before = _workers()

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with stdio_client(_params(kavi_home, workers=1)) as (read, write), \
                ClientSession(read, write, client_info=CLIENT) as session:
            await session.initialize()  # request 0

            async def runaway() -> None:
                try:
                    seen["spin"] = await session.call_tool("spin", {"seconds": 600})  # request 1
                except Exception as exc:  # the server answers the cancelled request with an error
                    seen["spin"] = exc

            async with anyio.create_task_group() as tg:
                tg.start_soon(runaway)
                await anyio.sleep(1.5)
                seen["running"] = len(_workers() - before)
                await session.send_notification(types.ClientNotification(types.CancelledNotification(
                    params=types.CancelledNotificationParams(requestId=1, reason="the agent moved on"))))
                with anyio.fail_after(10):  # the busy worker is gone; the pool's one waiting worker stays
                    while len(_workers() - before) > 1:
                        await anyio.sleep(0.1)
                seen["after"] = await session.call_tool("word_count", {"text": "still here"})
        return seen

    seen = anyio.run(scenario)
    assert seen["running"] == 2  # the spinning one, and the pool's replacement waiting for the next call
    assert not seen["after"].isError and seen["after"].structuredContent["words"] == 2
    records = ExecutionLog(kavi_home.executions_log).read_all()
    assert any(r.skill_name == "spin" and str(r.error).startswith("Cancelled") for r in records)
