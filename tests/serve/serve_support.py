"""Helpers for the serve and search tests: shipped example skills trusted quickly (a verified attempt recorded
with passing gates, approved by a person and promoted through the real forge step functions)."""

import json
from pathlib import Path
from typing import Any

import yaml

from kavi.forge.context import ForgeContext
from kavi.forge.promote import approve, promote
from kavi.home import KaviHome
from kavi.lifecycle import ProposalStatus, Verdict
from kavi.proposals.model import parse_proposal
from kavi.verdicts import ALL_GATES, GateResult

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "kavi" / "examples" / "answers"
PROPOSALS = ROOT / "kavi" / "examples" / "proposals"


def no_llm() -> Any:
    raise AssertionError("no model call expected here")


def example_spec(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((PROPOSALS / f"{name}.yaml").read_text())
    return data


def example_source(name: str) -> str:
    versions = sorted((p for p in (ANSWERS / name).iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    return (versions[-1] / "skill.py").read_text()


def trust(home: KaviHome, spec: dict[str, Any], source: str, approver: str = "tester") -> None:
    """Record `spec`, a verified attempt building `source`, a person's approval and the promotion."""
    ctx = ForgeContext.open(home, no_llm)
    ctx.records.register_proposal(parse_proposal(spec), source_path=None, complexity=0.1)
    name = spec["name"]
    attempt = len(ctx.records.builds(name)) + 1
    packet = ctx.store.put(json.dumps({"kind": "BUILD_PACKET", "messages": [], "attempt": attempt}).encode(),
                           "build_packet")
    skill = ctx.store.put(source.encode(), "skill_source")
    tests = ctx.store.put(b"def test_x() -> None: ...\n", "skill_tests")
    build_id = f"{name}-a{attempt}-serve"
    ctx.records.start_build(name, run_id=None, model="m", endpoint="e", packet=packet, build_id=build_id,
                            attempt=attempt, parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build(build_id, status="VERIFIED", failure_kind=None, skill_sha256=skill.sha256,
                             test_sha256=tests.sha256)
    ctx.records.record_gate_results(build_id, [GateResult(g, Verdict.PASSED, "ok", 0.1) for g in ALL_GATES])
    ctx.records.set_status(name, ProposalStatus.VERIFIED, build_id=build_id, reason="every gate passed")
    approve(ctx, name, approver)
    assert promote(ctx, name).promoted


def trust_example(home: KaviHome, name: str, approver: str = "tester") -> None:
    trust(home, example_spec(name), example_source(name), approver)
