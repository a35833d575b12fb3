"""The scheduled trust audit: its blocking check fails when a trusted file was changed after promotion."""

from typing import Any

import dagster as dg

from kavi.forge.context import ForgeContext
from kavi.forge.promote import approve, promote
from kavi.home import KaviHome
from kavi.lifecycle import Verdict
from kavi.proposals.model import parse_proposal
from kavi.verdicts import ALL_GATES, GateResult
from kavi_assets.assets.audit import TRUST_AUDIT_KEY, trust_audit
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from tests.factories import REPO

ANSWERS = REPO / "kavi" / "examples" / "answers"


def _no_llm() -> Any:
    raise AssertionError


def _promoted(home: KaviHome, proposal_data: dict[str, Any]) -> None:
    ctx = ForgeContext.open(home, _no_llm)
    ctx.records.register_proposal(parse_proposal(proposal_data), source_path=None, complexity=0.1)
    packet = ctx.store.put(b"p", "build_packet")
    src = ctx.store.put((ANSWERS / "word_count" / "1" / "skill.py").read_bytes(), "skill_source")
    ctx.records.start_build("word_count", run_id=None, model="m", endpoint="e", packet=packet,
                            build_id="word_count-a1-x", attempt=1, parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build("word_count-a1-x", status="VERIFIED", failure_kind=None, skill_sha256=src.sha256)
    ctx.records.record_gate_results("word_count-a1-x", [GateResult(g, Verdict.PASSED, "ok", 0.1) for g in ALL_GATES])
    approve(ctx, "word_count", "ana")
    promote(ctx, "word_count")


def _audit(home: KaviHome) -> dg.ExecuteInProcessResult:
    return dg.materialize([trust_audit], resources={"home": SkillsHomeResource(root=str(home.root)),
                                                    "gates": GateRunnerResource()}, raise_on_error=False)


def test_audit_passes_then_blocks_on_tamper(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    _promoted(kavi_home, proposal_data)
    ok = _audit(kavi_home)
    assert ok.success
    evals = ok.get_asset_check_evaluations()
    assert evals and all(e.passed for e in evals)
    path = kavi_home.skill_version_file("word_count", 1)
    path.chmod(0o644)
    path.write_text("import os\n")
    bad = _audit(kavi_home)
    evals = bad.get_asset_check_evaluations()
    assert evals and not evals[0].passed
    assert evals[0].asset_key == TRUST_AUDIT_KEY
