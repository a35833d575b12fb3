"""The resource gate in the forge's pipeline, on the recorded model: find_addresses' first answer backtracks from
every start position (VERIFY_RESOURCE, with the input shape, sizes, times and growth in its research note), the
retry packet asks for a linear-time algorithm, and the second answer verifies."""

import json

from kavi.forge.build import run_build
from kavi.forge.context import ForgeContext, ForgeSettings
from kavi.forge.intake import intake
from kavi.forge.packet import load_packet, prepare_packet
from kavi.forge.research import research
from kavi.forge.verify import verify
from kavi.home import KaviHome
from kavi.lifecycle import FailureKind, ProposalStatus, Verdict
from kavi.proposals.model import parse_proposal
from kavi.verdicts import GATE_RESOURCE
from resources.llm import LLMResource
from tests.factories import ANSWERS


def test_quadratic_answer_fails_the_resource_gate_and_the_linear_retry_verifies(kavi_home: KaviHome) -> None:
    ctx = ForgeContext.open(kavi_home, LLMResource(models=["recorded-coder-a"]).get_client, ForgeSettings())
    child = json.loads((ANSWERS / "email_domain_report" / "decomposition.json").read_text())["children"][0]
    intake(ctx, parse_proposal(child), None)
    prepare_packet(ctx, "find_addresses", run_id=None)
    run_build(ctx, "find_addresses", run_id=None)
    first = verify(ctx, "find_addresses", run_id=None)
    gates = {r.gate: r for r in first.results}
    assert not first.passed and [g for g, r in gates.items() if not r.ok] == [GATE_RESOURCE]
    note = research(ctx, "find_addresses", first)
    assert note.kind is FailureKind.VERIFY_RESOURCE and not note.escalated
    assert ctx.records.require_proposal("find_addresses").status is ProposalStatus.FAILED
    shapes = note.facts["gates"]["resource"]["shapes"]
    assert shapes and all(s["at_bound_s"] > 10 and len(s["sizes"]) == len(s["ms"]) >= 2 for s in shapes), shapes
    assert max(s["growth"] for s in shapes) > 1.5, shapes
    assert "text: 'a' repeated" in [s["shape"] for s in shapes]
    packet = prepare_packet(ctx, "find_addresses", run_id=None)
    assert packet.attempt == 2 and packet.prior_failures == 1
    build = ctx.records.latest_build("find_addresses")
    assert build is not None
    prompt = load_packet(ctx, build)["messages"][1]["content"]
    assert "VERIFY_RESOURCE" in prompt and "linear-time algorithm" in prompt and "'a' repeated" in prompt
    run_build(ctx, "find_addresses", run_id=None)
    second = verify(ctx, "find_addresses", run_id=None)
    assert second.passed, [(r.gate, r.reason) for r in second.results if not r.ok]
    resource = next(r for r in second.results if r.gate == GATE_RESOURCE)
    assert resource.verdict is Verdict.PASSED and resource.details["measured"] >= 5
