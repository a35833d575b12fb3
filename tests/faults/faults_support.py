"""Helpers for the fault tests: trusted versions made quickly, and the real `kavi` CLI in a subprocess."""

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from kavi.forge.context import ForgeContext
from kavi.forge.promote import approve, promote
from kavi.home import KaviHome
from kavi.lifecycle import ProposalStatus, Verdict
from kavi.proposals.model import parse_proposal
from kavi.verdicts import ALL_GATES, GateResult

ANSWERS = Path(__file__).resolve().parents[2] / "kavi" / "examples" / "answers"
WORD_COUNT_V1 = (ANSWERS / "word_count" / "1" / "skill.py").read_text()
# A second version of the same skill: same interface, a different description (so a different hash).
WORD_COUNT_V2 = WORD_COUNT_V1.replace('description = "Count the words, lines and characters of a text."',
                                      'description = "Count words, lines and characters (version two)."')
# The same skill declared FILE_WRITE: what a revised proposal with a changed class would be built into.
WORD_COUNT_FILE_WRITE = WORD_COUNT_V1.replace("SideEffectClass.READ_ONLY", "SideEffectClass.FILE_WRITE")


def word_count_spec(side_effect_class: str = "READ_ONLY", description: str | None = None) -> dict[str, Any]:
    return {
        "name": "word_count",
        "description": description or "Count the words, lines and characters of a text.",
        "inputs": [{"name": "text", "type": "str"}],
        "outputs": [{"name": "words", "type": "int"}, {"name": "lines", "type": "int"},
                    {"name": "characters", "type": "int"}],
        "side_effect_class": side_effect_class,
        "examples": [{"input": {"text": "a b"}, "expected": {"words": 2}}],
    }


def no_llm() -> Any:
    raise AssertionError("no model call expected here")


def ctx_for(home: KaviHome, **settings: Any) -> ForgeContext:
    from kavi.forge.context import ForgeSettings

    return ForgeContext.open(home, no_llm, ForgeSettings(**settings) if settings else None)


def verified_candidate(home: KaviHome, spec: dict[str, Any], source: str) -> str:
    """Record the spec (a first proposal or a revision) and a verified next attempt building `source`."""
    ctx = ctx_for(home)
    ctx.records.register_proposal(parse_proposal(spec), source_path=None, complexity=0.1)
    name = spec["name"]
    attempt = len(ctx.records.builds(name)) + 1
    packet = ctx.store.put(json.dumps({"kind": "BUILD_PACKET", "messages": [], "attempt": attempt}).encode(),
                           "build_packet")
    skill = ctx.store.put(source.encode(), "skill_source")
    tests = ctx.store.put(b"def test_x() -> None: ...\n", "skill_tests")
    build_id = f"{name}-a{attempt}-faults"
    ctx.records.start_build(name, run_id=None, model="m", endpoint="e", packet=packet, build_id=build_id,
                            attempt=attempt, parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build(build_id, status="VERIFIED", failure_kind=None, skill_sha256=skill.sha256,
                             test_sha256=tests.sha256)
    ctx.records.record_gate_results(build_id, [GateResult(g, Verdict.PASSED, "ok", 0.1) for g in ALL_GATES])
    ctx.records.set_status(name, ProposalStatus.VERIFIED, build_id=build_id, reason="every gate passed")
    return build_id


def trust_version(home: KaviHome, spec: dict[str, Any], source: str, approver: str = "tester") -> None:
    """A verified attempt of `source`, approved by a person and promoted: the next trusted version."""
    verified_candidate(home, spec, source)
    ctx = ctx_for(home)
    approve(ctx, spec["name"], approver)
    assert promote(ctx, spec["name"]).promoted


def closed_port_url() -> str:
    """An endpoint nothing listens on: a loopback port bound and closed again."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def kavi(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kavi_assets.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def registry_doc(home: KaviHome) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(home.registry_path.read_text())
    return data
