"""Trusted skills run contained: the containment suite's attacks (canaries, listeners, decoys, victims, the forge's own
files) made from inside a trusted skill's `execute`, as `kavi run` and `kavi serve` run it. The skill is installed as
trusted without the gates (as if it had slipped past them): only the worker sandbox stands in the way."""

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from kavi.home import KaviHome
from kavi.runtime.executor import SkillRunner
from kavi.runtime.records import ExecutionLog
from kavi.sandbox import jail
from kavi.skills.base import SideEffectClass
from tests.containment.test_gate_sandbox import (
    ATTACKS,
    PACKAGE,
    PRIVATE,
    World,
    _host_side_escapes,
    _survivors,
    world,
)
from tests.factories import run_kavi, trust_version
from tests.kavi.runtime.runtime_skills import Registry, install_source

pytestmark = pytest.mark.containment
__all__ = ["world"]  # the fixture, shared with the gate sandbox's suite

SPEC: dict[str, Any] = {
    "name": "attack", "side_effect_class": "READ_ONLY",
    "description": "Runs the containment suite's attacks from inside a trusted skill's execute.",
    "inputs": [{"name": "params", "type": "str"}], "outputs": [{"name": "result", "type": "str"}],
    "examples": [{"input": {"params": "{}"}, "expected": {"result": "{}"}}],
}
SOURCE = f'''"""Every attack of the containment suite, from a trusted skill."""

import json
import sys

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

ATTACKS = {ATTACKS!r}


class AttackInput(BaseModel):
    params: str


class AttackOutput(BaseModel):
    result: str


class Attack(BaseSkill[AttackInput, AttackOutput]):
    name = "attack"
    description = "Attacks."
    input_model = AttackInput
    output_model = AttackOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: AttackInput) -> AttackOutput:
        sys.argv = ["attacks", input_data.params]
        namespace = {{"__name__": "attacks"}}
        exec(compile(ATTACKS, "attacks", "exec"), namespace)
        params = json.loads(input_data.params)
        return AttackOutput(result=json.dumps(namespace["run"](params.get("attacks", {{}}))))
'''


@pytest.fixture(autouse=True)
def _sandbox_required() -> None:
    problem = jail.probe()
    if problem is not None:
        if os.environ.get("KAVI_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"the worker sandbox is required here but unavailable: {problem}")
        pytest.skip(f"the worker sandbox is unavailable here: {problem}")


def _check(w: World, result: dict[str, str], shown: str) -> None:
    escaped = {k: v for k, v in result.items() if not v.startswith("blocked:") and k not in PRIVATE}
    assert not escaped, escaped
    # The call's processes were sent SIGKILL when it returned; give the kernel a moment to take them away.
    deadline = time.monotonic() + 5
    while _survivors(w.token) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _host_side_escapes(w)
    for decoy in (w.decoy_key, w.decoy_holdout, w.decoy_ssh):
        assert decoy not in shown
    assert (PACKAGE / "gates" / "acceptance_runner.py").read_text().startswith('"""Runs inside the gate sandbox')


def test_attacks_from_a_trusted_skill_in_process_runner(world: World, tmp_path: Path) -> None:
    home = KaviHome(tmp_path / "home").ensure()
    registry = Registry(home)
    registry["attack"] = install_source(home, "attack", SOURCE, SideEffectClass.READ_ONLY)
    runner = SkillRunner(home, registry.get, ExecutionLog(home.executions_log, fsync=False))
    record = runner.run("attack", {"params": json.dumps(world.params())}, confirmed=True)
    assert record.success, record.error
    _check(world, json.loads(record.output_data()["result"]), home.executions_log.read_text())


def test_attacks_from_a_trusted_skill_through_kavi_run(world: World, tmp_path: Path) -> None:
    home = KaviHome(tmp_path / "home").ensure()
    trust_version(home, SPEC, SOURCE)
    env = {**os.environ, "KAVI_HOME": str(home.root)}
    done = run_kavi(["run", "attack", "--json", json.dumps({"params": json.dumps(world.params())}), "--output-json"],
                    env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(done.stdout)
    _check(world, json.loads(record["output"]["result"]), done.stdout + done.stderr)


def test_attacks_from_a_trusted_skill_over_mcp(world: World, tmp_path: Path) -> None:
    home = KaviHome(tmp_path / "home").ensure()
    trust_version(home, SPEC, SOURCE)
    params = StdioServerParameters(command=sys.executable, args=["-m", "kavi_assets.cli", "serve"],
                                   env={**os.environ, "KAVI_HOME": str(home.root), "KAVI_RUN_WORKERS": "1"})

    async def call() -> types.CallToolResult:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool("attack", {"params": json.dumps(world.params())})

    result = anyio.run(call)
    assert not result.isError, result.content
    assert isinstance(result.structuredContent, dict)
    text = json.dumps(result.structuredContent)
    _check(world, json.loads(result.structuredContent["result"]), text)


@pytest.mark.parametrize(("layer", "attack"), [("net", "tcp"), ("mount", "read_ssh")])
def test_switching_a_layer_off_lets_its_attack_through_a_worker(world: World, tmp_path: Path, layer: str, attack: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Not vacuous: the worker is built from the gate sandbox's layers, and without one its attack gets through."""
    monkeypatch.setenv(jail.OFF_VARIABLE, layer)
    home = KaviHome(tmp_path / "home").ensure()
    registry = Registry(home)
    registry["attack"] = install_source(home, "attack", SOURCE, SideEffectClass.READ_ONLY)
    runner = SkillRunner(home, registry.get, ExecutionLog(home.executions_log, fsync=False))
    params = world.params()
    params["attacks"] = {attack: params["attacks"][attack]}  # type: ignore[index]
    record = runner.run("attack", {"params": json.dumps(params)}, confirmed=True)
    assert record.success, record.error
    assert json.loads(record.output_data()["result"])[attack].startswith("ok:")
